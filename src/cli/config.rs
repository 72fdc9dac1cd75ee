//! `hierad config get|set|override` (the "Fuel Client" of
//! docs/spec/configdb-api.md; `history`, `restore` and `delete` are in
//! [`super::history`]), on a
//! hierad server over HTTP (`--server URL`, or `HIERAD_SERVER`) or a local
//! database (`--db PATH`), through [`crate::ops`].
//!
//! Decisions where the specification is silent:
//! - `get` prints the EFFECTIVE document (the fold of the root and each
//!   level of `--level`, values then overrides); `--stored` prints what is
//!   stored at exactly that level (`--kind values|overrides`), `--version N`
//!   one old version of it.
//! - Output `--format` defaults to json, as the specification says. `json` is
//!   the wire form (plain JSON; tagged objects only for what JSON cannot say),
//!   so `get --format json | set --format json` round-trips every type; `yaml`
//!   is Ruby's `to_yaml`; `plain` prints a scalar's string form (nil as an
//!   empty line) and an Array or Hash as the `hiera` command would. With
//!   `--key K`, json and yaml print `{K: value}`.
//! - Input: `--value V` is read as `--type` says. When it says nothing, V
//!   keeps the type of the value it replaces (the level's stored value, else
//!   the effective one) if it reads as that type ([`keep_type`]: an override
//!   of an Integer with `2` stays an Integer, as use case 3 of
//!   docs/spec/configdb-api.md expects), else it is a String (text stays text:
//!   `yes` or `0x10` are never reinterpreted). A keyed write prints what it
//!   stored, `deployment_id = 2 (Integer)`, and the Hashes its key's dots
//!   created. Without `--value`, the value (or with no `--key`, the whole
//!   document) comes from stdin, read as `--type` or `--format` says, YAML
//!   when neither does (YAML reads JSON too). `--type null` needs no value.
//! - `set --key` changes one key of the level's stored `values` (siblings
//!   kept); `override --key` one key of its stored `overrides`. Without
//!   `--key`, the whole document is replaced.
//!
//! Every error is one line on stderr and exit status 1; nothing is written.

use super::args::{Access, Conn, EnvLevel};
use super::fail;
use crate::configdb::{
    ConfigError, DocAddress, DocKind, KeyPath, NotFound, into_document, keypath,
};
use crate::hiera::{Hash, Value, render, yaml};
use crate::ops::Write as DocWrite;
use crate::wire;
use anyhow::{Context, anyhow, bail};
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

/// How `--value` or stdin is read (`--type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ValueType {
    Null,
    Int,
    Str,
    Json,
    Yaml,
    Bool,
}

/// `get`'s output format (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    Plain,
    Json,
    Yaml,
}

/// How `set`/`override` read stdin (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum InputFormat {
    Json,
    Yaml,
}

/// The document a command is about.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Place {
    #[command(flatten)]
    pub(crate) at: EnvLevel,
    /// The resource (datasource), e.g. astute or override/plugins
    #[arg(long, value_name = "NAME")]
    pub(crate) resource: String,
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) op: Op,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Op {
    /// Print a resource's effective document at a level, or one key of it
    Get(GetArgs),
    /// Write a level's values: a whole document from stdin, or one --key
    Set(SetArgs),
    /// Write a level's overrides: a whole document from stdin, or one --key
    Override(SetArgs),
    /// Show, set or remove the JSON Schema every write of a resource must match
    Schema(super::schema::SchemaArgs),
    /// List every version of a level's stored document, oldest first
    History(super::history::HistoryArgs),
    /// Write a new version holding an old version's content
    Restore(super::history::RestoreArgs),
    /// Delete a level's stored document (a deletion marker: restorable)
    Delete(super::history::DeleteArgs),
    /// Compare two versions of a level's document, or the effective one at two generations or tags
    Diff(super::diff::DiffArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct GetArgs {
    #[command(flatten)]
    pub(crate) place: Place,
    /// One key, dotted for nested keys and Array indexes: a.b.0
    #[arg(long)]
    pub(crate) key: Option<String>,
    /// Output format [default: json; with --show-lookup, a table]
    #[arg(long, value_enum)]
    pub(crate) format: Option<Format>,
    /// The effective document: root, then each level, values then overrides (the default)
    #[arg(long, conflicts_with_all = ["stored", "version"])]
    pub(crate) effective: bool,
    /// What is stored at exactly this level instead of the effective document
    #[arg(long)]
    pub(crate) stored: bool,
    /// Version N of the stored document (implies --stored)
    #[arg(long, value_name = "N")]
    pub(crate) version: Option<u64>,
    /// Which stored document --stored/--version read
    #[arg(long, value_enum, default_value = "values")]
    pub(crate) kind: KindArg,
    /// Each top-level key's origin: level, kind, version, author, time (a table; JSON with --format json)
    #[arg(long, conflicts_with_all = ["stored", "version", "key"])]
    pub(crate) show_lookup: bool,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

/// `--kind`: which of a level's two documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KindArg {
    Values,
    Overrides,
}

impl From<KindArg> for DocKind {
    fn from(k: KindArg) -> DocKind {
        match k {
            KindArg::Values => DocKind::Values,
            KindArg::Overrides => DocKind::Overrides,
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct SetArgs {
    #[command(flatten)]
    pub(crate) place: Place,
    /// One key to set, dotted for nested keys: a.b.0 (without it, stdin is
    /// the whole document). Every dot splits: quote a key that holds dots,
    /// or slashes and dots such as a file name, with '…' or "…":
    /// --key "configuration.file.'/etc/app.conf'.content"
    #[arg(long)]
    pub(crate) key: Option<String>,
    /// The key's value (without it, the value is read from stdin). Without
    /// --type, it keeps the type of the value it replaces when it reads as
    /// one (2 for an Integer, true for a Boolean); a new key is a String
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) value: Option<String>,
    /// How to read the value: null needs none; int and bool (true/false) must parse; json and yaml parse the text [default: str for --value, yaml for stdin]
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    pub(crate) value_type: Option<ValueType>,
    /// How to read stdin [default: yaml, which reads JSON too]
    #[arg(long, value_enum)]
    pub(crate) format: Option<InputFormat>,
    /// Have the server encrypt the String at this key path (the --key
    /// itself, or a key of the stdin document) as an eyaml ENC[PKCS7,…]
    /// block before it is stored; repeat for several (needs --server)
    #[arg(long, value_name = "KEYPATH", conflicts_with = "dry_run")]
    pub(crate) encrypt: Vec<String>,
    #[command(flatten)]
    pub(crate) dry: super::dry_run::DryRunArg,
    #[command(flatten)]
    pub(crate) conn: Conn,
}

/// Runs `hierad config`.
///
/// # Errors
///
/// Only failures to write the output; the command's own errors are one
/// line on stderr and exit status 1.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    let outcome = match args.op {
        Op::Get(get) => run_get(&get).map(Some),
        Op::Set(set) => run_set(&set, DocKind::Values).map(Some),
        Op::Override(set) => run_set(&set, DocKind::Overrides).map(Some),
        Op::Schema(schema) => super::schema::run(&schema).map(Some),
        Op::History(history) => super::history::history(&history).map(Some),
        Op::Restore(restore) => super::history::restore(&restore).map(Some),
        Op::Delete(doc) => super::history::delete(&doc).map(Some),
        Op::Diff(diff) => super::diff::run(&diff).map(Some),
    };
    match outcome {
        Ok(text) => {
            if let Some(text) = text {
                stdout.write_all(text.as_bytes())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => Ok(fail(&err)),
    }
}

fn run_get(args: &GetArgs) -> anyhow::Result<String> {
    let key = args.key.as_deref().map(KeyPath::parse).transpose()?;
    let stored = args.stored || args.version.is_some();
    if !stored && args.kind != KindArg::Values {
        bail!("--kind picks the stored document that --stored or --version reads");
    }
    let db = args.conn.open(Access::Read)?;
    let path = &args.place.at.path_in(db.as_ref())?;
    let env = args.place.at.env;
    let resource = args.place.resource.as_str();
    let at = DocAddress::new(env, path.clone(), resource, args.kind.into());
    if args.show_lookup {
        let answer = db.show_lookup(env, path, resource)?;
        return super::show_lookup::render(&answer, args.format.unwrap_or(Format::Plain));
    }
    let (doc, what) = if stored {
        let doc = db.stored(&at, args.version)?;
        let what = match args.version {
            Some(n) => format!("{at} (version {n})"),
            None => at.to_string(),
        };
        (doc, what)
    } else {
        let doc = db.effective(env, path, resource)?;
        (doc, format!("effective {at}"))
    };
    let Some(key) = key else {
        return render_output(&Value::Hash(doc), args.format.unwrap_or(Format::Json));
    };
    let value = keypath::get(&doc, &key)
        .map_err(ConfigError::from)?
        .ok_or_else(|| {
            ConfigError::from(NotFound::Key {
                key: key.as_str().to_owned(),
                what,
            })
        })?;
    match args.format.unwrap_or(Format::Json) {
        Format::Plain => render_output(value, Format::Plain),
        format => {
            let mut wrapped = Hash::default();
            wrapped.insert(Value::str(key.as_str()), value.clone());
            render_output(&Value::Hash(wrapped), format)
        }
    }
}

/// The text `get` prints for a value.
///
/// # Errors
///
/// The few Strings Ruby's `to_yaml` itself cannot write.
pub(crate) fn render_output(value: &Value, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Plain => match value {
            Value::Array(_) | Value::Hash(_) => render::ruby::pp(value, 79),
            scalar => format!("{}\n", render::ruby::to_s(scalar)),
        },
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&wire::to_json(value))?;
            text.push('\n');
            text
        }
        Format::Yaml => {
            render::yaml::to_yaml(value).map_err(|e| anyhow!("cannot write YAML: {e}"))?
        }
    })
}

fn run_set(args: &SetArgs, kind: DocKind) -> anyhow::Result<String> {
    let key = args.key.as_deref().map(KeyPath::parse).transpose()?;
    let input = input_plan(
        key.is_some(),
        args.value.is_some(),
        args.value_type,
        args.format,
    )?;
    let value = match (input, &args.value) {
        (Input::Given(ty), Some(text)) => parse_value(ty, text)?,
        (Input::Null, _) => Value::Nil,
        (Input::Stdin(ty), _) => parse_value(ty, &read_stdin(ty)?)?,
        (Input::Given(_), None) => unreachable!("input_plan gives Given only with a --value"),
    };
    let place = &args.place;
    let db = args.conn.open(Access::Write)?;
    let path = place.at.path_in(db.as_ref())?;
    let at = DocAddress::new(place.at.env, path, &place.resource, kind);
    let encrypt: Vec<KeyPath> = args
        .encrypt
        .iter()
        .map(|k| KeyPath::parse(k))
        .collect::<Result<_, _>>()?;
    let Some(key) = key else {
        let doc = into_document(value).map_err(|e| anyhow!("stdin: {e}"))?;
        if let Some(format) = args.dry.dry_run {
            return super::dry_run::render(&db.dry_run(&at, DocWrite::Put(&doc))?, format);
        }
        if encrypt.is_empty() {
            db.put(&at, &doc)?;
        } else {
            db.write_encrypting(&at, None, &Value::Hash(doc), &encrypt)?;
        }
        return Ok(String::new());
    };
    // The value the write replaces: the level's own, else what a lookup
    // finds there now (use case 3 of docs/spec/configdb-api.md overrides
    // a root value).
    let stored = db.stored(&at, None)?;
    let replaced = match keypath::get(&stored, &key) {
        Ok(Some(v)) => Some(v.clone()),
        _ => {
            let effective = db.effective(at.env, &at.path, &at.resource)?;
            keypath::get(&effective, &key).ok().flatten().cloned()
        }
    };
    let value = match (&args.value, args.value_type) {
        (Some(text), None) => keep_type(text, replaced.as_ref()),
        _ => value,
    };
    let created = keypath::new_hashes(&stored, &key);
    if !encrypt.is_empty() {
        db.write_encrypting(&at, Some(&key), &value, &encrypt)?;
        // The plaintext is not echoed.
        let shown = Value::str("ENC[PKCS7,…]");
        return Ok(set_report(&key, &shown, replaced.as_ref(), &created));
    }
    if let Some(format) = args.dry.dry_run {
        return super::dry_run::render(&db.dry_run(&at, DocWrite::Key(&key, &value))?, format);
    }
    db.set_key(&at, &key, &value)?;
    Ok(set_report(&key, &value, replaced.as_ref(), &created))
}

/// `--value` without `--type`: the type of the value it replaces when the
/// text reads as one (`2` for an Integer, `true` for a Boolean, `1.5` for
/// a Float, JSON for an Array or a Hash), else a String; a new key is a
/// String. A nil or a String has nothing to keep.
pub(crate) fn keep_type(text: &str, replaced: Option<&Value>) -> Value {
    let kept = match replaced {
        Some(Value::Int(_) | Value::BigInt(_)) => parse_int(text),
        Some(Value::Bool(_)) => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        // Digits, a point, an exponent: never `inf` or `NaN`, which Rust
        // reads and YAML writes otherwise.
        Some(Value::Float(_)) => text
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
            .then(|| text.parse::<f64>().ok())
            .flatten()
            .filter(|f| f.is_finite())
            .map(Value::Float),
        Some(Value::Array(_)) => wire::from_str(text).ok().filter(|v| v.as_array().is_some()),
        Some(Value::Hash(_)) => wire::from_str(text).ok().filter(|v| v.as_hash().is_some()),
        _ => None,
    };
    kept.unwrap_or_else(|| Value::str(text))
}

/// A type's name in `set`'s report: Ruby's class, but one Boolean.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) => "Boolean",
        Value::Nil => "nil",
        other => other.class_name(),
    }
}

/// What a keyed `set`/`override` stored, on stdout: `key = value (Type)`,
/// the replaced value's type when it differs, and the Hashes the key's
/// dots made (a title holding dots needs quotes: it is easy to split one
/// unawares).
fn set_report(
    key: &KeyPath,
    value: &Value,
    replaced: Option<&Value>,
    created: &[String],
) -> String {
    const SHOWN: usize = 80;
    let json = serde_json::to_string(&wire::to_json(value)).unwrap_or_default();
    let shown = if json.chars().count() > SHOWN {
        format!("{}…", json.chars().take(SHOWN).collect::<String>())
    } else {
        json
    };
    let ty = type_name(value);
    let mut report = match replaced.map(type_name) {
        Some(was) if was != ty => format!("{key} = {shown} ({ty}, was {was})\n"),
        _ => format!("{key} = {shown} ({ty})\n"),
    };
    if !created.is_empty() {
        report.push_str(&format!(
            "created Hashes: {} (each dot of --key splits a key; quote a key holding dots: a.'b.c')\n",
            created.join(", ")
        ));
    }
    report
}

/// Where a `set`/`override` value comes from, and how it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    /// `--value`, read as this type.
    Given(ValueType),
    /// `--type null`: no value at all.
    Null,
    /// stdin, read as this type.
    Stdin(ValueType),
}

/// Checks the input flags against each other and decides how to read.
///
/// # Errors
///
/// A combination that says two things or nothing sensible.
pub(crate) fn input_plan(
    has_key: bool,
    has_value: bool,
    value_type: Option<ValueType>,
    format: Option<InputFormat>,
) -> anyhow::Result<Input> {
    let format_type = format.map(|f| match f {
        InputFormat::Json => ValueType::Json,
        InputFormat::Yaml => ValueType::Yaml,
    });
    if !has_key {
        if has_value || value_type.is_some() {
            bail!(
                "--value and --type describe the value of one --key; without --key, stdin is the whole document (--format json|yaml)"
            );
        }
        return Ok(Input::Stdin(format_type.unwrap_or(ValueType::Yaml)));
    }
    if has_value {
        if format.is_some() {
            bail!("--format says how to read stdin; for --value, say --type");
        }
        return match value_type.unwrap_or(ValueType::Str) {
            ValueType::Null => bail!("--type null takes no --value"),
            ty => Ok(Input::Given(ty)),
        };
    }
    match (value_type, format_type) {
        (Some(ValueType::Null), _) => Ok(Input::Null),
        (Some(ty), Some(fty)) if ty != fty => {
            bail!("--type and --format disagree on how to read stdin; give one of them")
        }
        (Some(ty), _) | (None, Some(ty)) => Ok(Input::Stdin(ty)),
        (None, None) => Ok(Input::Stdin(ValueType::Yaml)),
    }
}

/// Reads a value as `ty` says.
///
/// # Errors
///
/// Text that is not of that type, naming the type and the text.
pub(crate) fn parse_value(ty: ValueType, text: &str) -> anyhow::Result<Value> {
    let shown = || {
        let short: String = text.chars().take(60).collect();
        if short.len() < text.len() {
            format!("\"{short}…\"")
        } else {
            format!("\"{short}\"")
        }
    };
    match ty {
        ValueType::Null => Ok(Value::Nil),
        ValueType::Str => Ok(Value::str(text)),
        ValueType::Int => parse_int(text)
            .ok_or_else(|| anyhow!("bad value for --type int: {} is not an integer", shown())),
        ValueType::Bool => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => bail!(
                "bad value for --type bool: {} is neither true nor false",
                shown()
            ),
        },
        ValueType::Json => {
            wire::from_str(text).map_err(|e| anyhow!("bad value for --type json: {e}"))
        }
        ValueType::Yaml => yaml::load(text).map_err(|e| anyhow!("bad value for --type yaml: {e}")),
    }
}

/// An optional sign, then decimal digits; any size.
fn parse_int(text: &str) -> Option<Value> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let text = text.strip_prefix('+').unwrap_or(text);
    match text.parse::<i64>() {
        Ok(n) => Some(Value::Int(n)),
        Err(_) => text.parse().ok().map(Value::integer),
    }
}

/// The whole of stdin; for scalar types, without the final line break a
/// pipe adds.
fn read_stdin(ty: ValueType) -> anyhow::Result<String> {
    let mut stdin = std::io::stdin().lock();
    if stdin.is_terminal() {
        bail!("no --value given and stdin is a terminal: give --value, or pipe the value in");
    }
    let mut bytes = Vec::new();
    stdin.read_to_end(&mut bytes).context("cannot read stdin")?;
    let mut text = String::from_utf8(bytes).map_err(|_| anyhow!("stdin is not UTF-8 text"))?;
    if matches!(ty, ValueType::Str | ValueType::Int | ValueType::Bool) {
        if text.ends_with('\n') {
            text.pop();
        }
        if text.ends_with('\r') {
            text.pop();
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    #[test]
    fn values_parse_by_type() {
        use ValueType::*;
        let ok: Vec<(ValueType, &str, Value)> = vec![
            (Null, "", Value::Nil),
            (Str, "2", Value::str("2")),
            (Str, "", Value::str("")),
            (Str, "yes", Value::str("yes")),
            (Int, "2", Value::Int(2)),
            (Int, "-15", Value::Int(-15)),
            (Int, "+7", Value::Int(7)),
            (
                Int,
                "123456789012345678901234567890",
                Value::integer("123456789012345678901234567890".parse().unwrap()),
            ),
            (Bool, "true", Value::Bool(true)),
            (Bool, "false", Value::Bool(false)),
            (Json, "2", Value::Int(2)),
            (Json, "2.0", Value::Float(2.0)),
            (Json, "null", Value::Nil),
            (
                Json,
                r#"{"a": [1, "x"]}"#,
                Value::Hash(rhash! {"a" => Value::Array(vec![Value::Int(1), Value::str("x")])}),
            ),
            (Yaml, "a: 1\n", Value::Hash(rhash! {"a" => Value::Int(1)})),
            (
                Yaml,
                "[1, 2]",
                Value::Array(vec![Value::Int(1), Value::Int(2)]),
            ),
            (Yaml, "yes", Value::Bool(true)),
            (Yaml, ":sym", Value::Symbol("sym".into())),
            (Yaml, "", Value::Nil),
        ];
        for (ty, text, want) in ok {
            assert_eq!(parse_value(ty, text).unwrap(), want, "{ty:?} {text:?}");
        }
        let bad: &[(ValueType, &str, &str)] = &[
            (
                Int,
                "2.5",
                "bad value for --type int: \"2.5\" is not an integer",
            ),
            (Int, "", "is not an integer"),
            (Int, "-", "is not an integer"),
            (Int, " 2", "is not an integer"),
            (Int, "0x10", "is not an integer"),
            (
                Bool,
                "yes",
                "bad value for --type bool: \"yes\" is neither true nor false",
            ),
            (Bool, "True", "neither true nor false"),
            (Json, "{a: 1}", "bad value for --type json: malformed JSON"),
            (Yaml, "a: [", "bad value for --type yaml:"),
        ];
        for (ty, text, want) in bad {
            let err = parse_value(*ty, text).unwrap_err().to_string();
            assert!(err.contains(want), "{ty:?} {text:?}: {err}");
        }
    }

    #[test]
    fn input_flags_combine() {
        use InputFormat as F;
        use ValueType as T;
        type Case = (
            bool,
            bool,
            Option<T>,
            Option<F>,
            Result<Input, &'static str>,
        );
        let cases: &[Case] = &[
            // (key, value, type, format) → plan
            (false, false, None, None, Ok(Input::Stdin(T::Yaml))),
            (false, false, None, Some(F::Json), Ok(Input::Stdin(T::Json))),
            (false, false, None, Some(F::Yaml), Ok(Input::Stdin(T::Yaml))),
            (
                false,
                true,
                None,
                None,
                Err("without --key, stdin is the whole document"),
            ),
            (
                false,
                false,
                Some(T::Int),
                None,
                Err("describe the value of one --key"),
            ),
            (true, true, None, None, Ok(Input::Given(T::Str))),
            (true, true, Some(T::Int), None, Ok(Input::Given(T::Int))),
            (
                true,
                true,
                Some(T::Null),
                None,
                Err("--type null takes no --value"),
            ),
            (
                true,
                true,
                None,
                Some(F::Json),
                Err("for --value, say --type"),
            ),
            (true, false, Some(T::Null), None, Ok(Input::Null)),
            (true, false, None, None, Ok(Input::Stdin(T::Yaml))),
            (true, false, Some(T::Json), None, Ok(Input::Stdin(T::Json))),
            (true, false, Some(T::Str), None, Ok(Input::Stdin(T::Str))),
            (true, false, None, Some(F::Json), Ok(Input::Stdin(T::Json))),
            (
                true,
                false,
                Some(T::Json),
                Some(F::Json),
                Ok(Input::Stdin(T::Json)),
            ),
            (true, false, Some(T::Int), Some(F::Yaml), Err("disagree")),
        ];
        for (key, value, ty, format, want) in cases {
            let got = input_plan(*key, *value, *ty, *format);
            match (got, want) {
                (Ok(got), Ok(want)) => assert_eq!(got, *want),
                (Err(e), Err(msg)) => assert!(e.to_string().contains(msg), "{e}"),
                (got, want) => panic!("{key} {value} {ty:?} {format:?}: {got:?} vs {want:?}"),
            }
        }
    }

    #[test]
    fn outputs() {
        let doc = Value::Hash(rhash! {"deployment_id" => Value::Int(15)});
        let cases: Vec<(Value, Format, &str)> = vec![
            (Value::Int(15), Format::Plain, "15\n"),
            (Value::Nil, Format::Plain, "\n"),
            (Value::str("a b"), Format::Plain, "a b\n"),
            (Value::Float(1.0), Format::Plain, "1.0\n"),
            (
                Value::Array(vec![Value::Int(1), Value::str("x")]),
                Format::Plain,
                "[1, \"x\"]\n",
            ),
            (doc.clone(), Format::Json, "{\n  \"deployment_id\": 15\n}\n"),
            (doc.clone(), Format::Yaml, "---\ndeployment_id: 15\n"),
            (
                Value::Hash(rhash! {"s" => Value::Symbol("x".into())}),
                Format::Json,
                "{\n  \"s\": {\n    \"__hierad__\": \"sym\",\n    \"name\": \"x\"\n  }\n}\n",
            ),
        ];
        for (value, format, want) in cases {
            assert_eq!(
                render_output(&value, format).unwrap(),
                want,
                "{value:?} {format:?}"
            );
        }
    }
}
