//! Why a Hiera 5 lookup failed, worded as Puppet 7 words it (the issue
//! texts of puppet/pops/issues.rb and the messages of puppet/pops/lookup/).

/// A failed Hiera 5 lookup. Puppet raises almost all of these as
/// `Puppet::DataBinding::LookupError`, which `puppet lookup` answers with
/// exit status 1 and no output; the text shows in explanations.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A hiera.yaml that Puppet refuses (its wording, with the file).
    #[error("{message} (file: {path})")]
    Config { path: String, message: String },
    /// A data file that does not parse: Puppet's "Unable to parse …".
    #[error("{0}")]
    Data(String),
    /// An interpolation Puppet refuses (unknown method, misplaced alias,
    /// method syntax in hiera.yaml).
    #[error("{0}")]
    Interpolation(String),
    /// A key or interpolated key that does not split into segments.
    #[error("Syntax error in {0}")]
    KeySyntax(String),
    /// A dotted key reaching into a value that has no keys.
    #[error(
        "Data Provider type mismatch: Got {class} when a hash-like object was expected to access value using '{segment}' from key '{key}'"
    )]
    NotDiggable {
        class: String,
        segment: String,
        key: String,
    },
    /// A key looked up again while it is being looked up.
    #[error("Recursive lookup detected in [{0}]")]
    Recursive(String),
    /// A `lookup_options` value Puppet refuses.
    #[error("{0}")]
    Options(String),
    /// A `merge` Puppet does not know (an `ArgumentError` in Puppet, which
    /// `puppet lookup` prints, unlike its lookup errors).
    #[error("{0}")]
    Strategy(String),
    /// What Puppet reads but hierad does not (yet): named, never guessed.
    #[error("{0}")]
    Unsupported(String),
    /// A lookup error met in the global layer, as `lookup_global`
    /// rewraps it for the key looked up.
    #[error("Lookup of key '{key}' failed: {detail}")]
    Global { key: String, detail: Box<Error> },
    /// What a data function raises other than a `LookupError` (an
    /// `ArgumentError`): `puppet lookup` prints it.
    #[error("{0}")]
    Function(String),
    /// A merge of two values of types the strategy cannot merge.
    #[error("{0}")]
    Merge(String),
    /// A lookup refused for spending more than its budget
    /// (`hiera::budget`): hierad's, which Puppet does not have.
    #[error("{}", .0.message)]
    Budget(crate::hiera::HieraError),
}

impl Error {
    /// Whether `puppet lookup` prints this error (`Error: Could not run:
    /// …`) rather than exiting 1 silently as it does for a
    /// `Puppet::DataBinding::LookupError`.
    pub fn printed_by_puppet(&self) -> bool {
        matches!(self, Error::Strategy(_) | Error::Function(_))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
