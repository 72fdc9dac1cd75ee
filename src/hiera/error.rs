//! Hiera's errors: the Ruby exception class and message the real Hiera 3.10
//! raises, so every client (CLI, HTTP, the Ruby shim) can report or re-raise
//! exactly what Hiera would.

use std::fmt;

/// The Ruby exception class of a Hiera error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// `Exception`: type mismatches in array/hash lookups and dotted keys.
    Exception,
    /// `ArgumentError`: bad key syntax, dotted key with array/hash lookup,
    /// unsortable arrays under `sort_merged_arrays`.
    ArgumentError,
    /// `NoMethodError`: a dotted key segment applied to an Integer.
    NoMethodError,
    /// `TypeError`: a data file whose top level is not a Hash.
    TypeError,
    /// `RuntimeError`: configuration problems (v5 config, missing file).
    RuntimeError,
    /// `Hiera::Error`: deep merges without the deep_merge gem.
    HieraError,
    /// `Hiera::InterpolationLoop`: the recursion guard fired.
    InterpolationLoop,
    /// `Hiera::InterpolationInvalidValue`: a bad `%{...}` token.
    InterpolationInvalidValue,
    /// `Hiera::InvalidConfigurationError`: e.g. an Array datadir.
    InvalidConfigurationError,
    /// `Psych::SyntaxError`: malformed YAML.
    PsychSyntaxError,
    /// `Psych::BadAlias`: YAML aliases are refused by Psych 4's `YAML.load`.
    PsychBadAlias,
    /// `Psych::DisallowedClass`: dates, times and Ruby objects in YAML.
    PsychDisallowedClass,
    /// `JSON::ParserError`: malformed JSON data.
    JsonParserError,
    /// `JSON::NestingError`: JSON nested deeper than `JSON.parse` allows.
    JsonNestingError,
    /// `SystemStackError`: JSON nested deeper than the C stack of
    /// `JSON.load` (which sets no nesting limit) can take.
    SystemStackError,
    /// `NameError`: a `json_class` that is no constant name (`JSON.load`).
    NameError,
    /// `DeepMerge::InvalidParameter`: incompatible deep_merge options.
    DeepMergeInvalidParameter,
    /// `Errno::EISDIR`: a data or config "file" that is a directory.
    ErrnoEisdir,
    /// `Errno::EACCES`: a data or config file that cannot be read.
    ErrnoEacces,
    /// hierad's own: the lookup took more interpolation steps than its
    /// budget allows (Hiera has no such limit; this is a refusal).
    StepBudgetExceeded,
    /// hierad's own: interpolation would build more bytes of values than
    /// the lookup's budget allows.
    ByteBudgetExceeded,
    /// `Puppet::DataBinding::LookupError`: a Hiera 5 lookup failed
    /// (`crate::lookup5`; `puppet lookup` exits 1 printing nothing).
    LookupError,
}

impl ErrorClass {
    /// The class name as Ruby prints it.
    pub fn ruby_name(self) -> &'static str {
        match self {
            ErrorClass::Exception => "Exception",
            ErrorClass::ArgumentError => "ArgumentError",
            ErrorClass::NoMethodError => "NoMethodError",
            ErrorClass::TypeError => "TypeError",
            ErrorClass::RuntimeError => "RuntimeError",
            ErrorClass::HieraError => "Hiera::Error",
            ErrorClass::InterpolationLoop => "Hiera::InterpolationLoop",
            ErrorClass::InterpolationInvalidValue => "Hiera::InterpolationInvalidValue",
            ErrorClass::InvalidConfigurationError => "Hiera::InvalidConfigurationError",
            ErrorClass::PsychSyntaxError => "Psych::SyntaxError",
            ErrorClass::PsychBadAlias => "Psych::BadAlias",
            ErrorClass::PsychDisallowedClass => "Psych::DisallowedClass",
            ErrorClass::JsonParserError => "JSON::ParserError",
            ErrorClass::JsonNestingError => "JSON::NestingError",
            ErrorClass::SystemStackError => "SystemStackError",
            ErrorClass::NameError => "NameError",
            ErrorClass::DeepMergeInvalidParameter => "DeepMerge::InvalidParameter",
            ErrorClass::ErrnoEisdir => "Errno::EISDIR",
            ErrorClass::ErrnoEacces => "Errno::EACCES",
            // Not Ruby classes: the shim raises them as RuntimeErrors
            // naming this class.
            ErrorClass::StepBudgetExceeded => "Hierad::StepBudgetExceeded",
            ErrorClass::ByteBudgetExceeded => "Hierad::ByteBudgetExceeded",
            ErrorClass::LookupError => "Puppet::DataBinding::LookupError",
        }
    }
}

/// An error Hiera 3.10 would raise: its class and its exact message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HieraError {
    pub class: ErrorClass,
    pub message: String,
}

impl HieraError {
    pub(crate) fn new(class: ErrorClass, message: impl Into<String>) -> HieraError {
        HieraError {
            class,
            message: message.into(),
        }
    }
}

impl fmt::Display for HieraError {
    /// Ruby's own rendering of an uncaught exception: `message (Class)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.class.ruby_name())
    }
}

impl std::error::Error for HieraError {}

/// Results of the Hiera core.
pub type Result<T, E = HieraError> = std::result::Result<T, E>;
