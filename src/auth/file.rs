//! The auth file (`hierad serve --auth FILE`, docs/security.md and the
//! example docs/auth.example.toml): users with Argon2 password hashes,
//! bearer tokens stored as SHA-256 digests, client-certificate rules and
//! the Keystone settings. Read whole and checked on every (re)load;
//! edited by `hierad auth …` in `edit`.

use super::Role;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// What went wrong with an auth file.
#[derive(Debug, thiserror::Error)]
pub enum AuthFileError {
    #[error("cannot read the auth file {}: {error}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot write the auth file {}: {error}", path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the auth file {} is not valid: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    /// Read and valid, but what it names cannot be used (the Keystone
    /// password file).
    #[error("the auth file {}: {message}", path.display())]
    Unusable { path: PathBuf, message: String },
    #[error("{0}")]
    Refused(String),
}

/// A user who signs in with HTTP Basic.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserEntry {
    pub name: String,
    pub role: Role,
    /// An Argon2 hash in the PHC form (`$argon2id$v=19$…`), made by
    /// `hierad auth add-user`.
    pub password_hash: String,
    pub environments: Option<Vec<i64>>,
    /// May read eyaml values decrypted (docs/security.md "Secrets"),
    /// whatever its role.
    #[serde(default)]
    pub decrypt: bool,
}

/// A bearer token: only its SHA-256 digest is kept.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    pub name: String,
    pub role: Role,
    /// The token's SHA-256, 64 hex digits.
    pub sha256: String,
    /// RFC 3339 (`2027-01-31T00:00:00Z`); none: never expires.
    pub expires_at: Option<String>,
    pub environments: Option<Vec<i64>>,
    /// May read eyaml values decrypted (docs/security.md "Secrets"),
    /// whatever its role.
    #[serde(default)]
    pub decrypt: bool,
}

/// A client certificate (signed by `--tls-client-ca`) mapped to a role by
/// its subject's common name or one of its DNS subject alternative names.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CertEntry {
    pub cn: Option<String>,
    pub san: Option<String>,
    pub role: Role,
    pub environments: Option<Vec<i64>>,
    /// May read eyaml values decrypted (docs/security.md "Secrets"),
    /// whatever its role.
    #[serde(default)]
    pub decrypt: bool,
}

/// How to reach Keystone v3 and what its roles mean here.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeystoneEntry {
    /// Keystone's identity endpoint, e.g. `http://keystone:5000/v3`.
    pub url: String,
    /// The service account that validates tokens.
    pub user: String,
    #[serde(default = "default_domain")]
    pub user_domain: String,
    /// A file holding the service account's password (one line).
    pub password_file: PathBuf,
    pub project: String,
    #[serde(default = "default_domain")]
    pub project_domain: String,
    /// Keystone role name → hierad role; a user with several gets the
    /// highest, one with none of them is refused.
    pub roles: BTreeMap<String, Role>,
    /// Keystone project name → the environments its tokens may use. Unset:
    /// every environment. Set: a token scoped to a project it does not
    /// list (or to none) is refused.
    pub projects: Option<BTreeMap<String, Vec<i64>>>,
    /// Validated tokens remembered until their expiry, at most this many.
    #[serde(default = "default_cache_entries")]
    pub cache_entries: u64,
    /// And for at most this long: a token revoked in Keystone is refused
    /// once its validation is this old (0: every request asks Keystone).
    #[serde(default = "default_cache_secs")]
    pub cache_secs: u64,
    /// Per call to Keystone.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// CA certificates (PEM) that sign Keystone's certificate, for an
    /// https `url` under a private CA (default: the Mozilla roots).
    pub ca_file: Option<PathBuf>,
    /// Every principal Keystone signs in may read eyaml values decrypted
    /// (docs/security.md "Secrets"), whatever its role.
    #[serde(default)]
    pub decrypt: bool,
}

fn default_domain() -> String {
    "Default".to_owned()
}

fn default_cache_entries() -> u64 {
    10_000
}

/// keystonemiddleware's `token_cache_time`, which OpenStack services
/// remember a validation for.
fn default_cache_secs() -> u64 {
    300
}

fn default_timeout_secs() -> u64 {
    5
}

/// The whole auth file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthFile {
    #[serde(default, rename = "user")]
    pub users: Vec<UserEntry>,
    #[serde(default, rename = "token")]
    pub tokens: Vec<TokenEntry>,
    #[serde(default, rename = "client_cert")]
    pub client_certs: Vec<CertEntry>,
    pub keystone: Option<KeystoneEntry>,
}

impl AuthFile {
    /// Reads and checks `path`.
    ///
    /// # Errors
    ///
    /// It cannot be read, is not TOML of this form, or breaks a rule
    /// (a duplicate name, a malformed hash or date).
    pub fn load(path: &Path) -> Result<AuthFile, AuthFileError> {
        let text =
            crate::config_file::read_to_string(path).map_err(|error| AuthFileError::Read {
                path: path.to_owned(),
                error,
            })?;
        AuthFile::parse(&text).map_err(|message| AuthFileError::Invalid {
            path: path.to_owned(),
            message,
        })
    }

    /// Parses and checks the text of an auth file.
    ///
    /// # Errors
    ///
    /// What is wrong, naming the entry.
    pub fn parse(text: &str) -> Result<AuthFile, String> {
        let file: AuthFile =
            toml_edit::de::from_str(text).map_err(|e| not_toml(text, e.message(), e.span()))?;
        file.check()?;
        Ok(file)
    }

    fn check(&self) -> Result<(), String> {
        let mut names = HashSet::new();
        for user in &self.users {
            if !names.insert(&user.name) {
                return Err(format!("user {:?} is listed twice", user.name));
            }
            // HTTP Basic cannot carry a ':' in a user id (RFC 7617), and
            // other principals' names are `kind:name` (token:, cert:,
            // keystone:, local:): a user so named would pass for one in
            // history and the access log.
            if user.name.is_empty()
                || user.name.contains(':')
                || user.name.chars().any(char::is_control)
            {
                return Err(format!(
                    "user {:?}: a user name must be non-empty, without ':' or control characters",
                    user.name
                ));
            }
            let hash = argon2::password_hash::PasswordHash::new(&user.password_hash).map_err(|e| {
                format!(
                    "user {:?}: password_hash is not a PHC hash ({e}); make one with `hierad auth add-user`",
                    user.name
                )
            })?;
            // Any other algorithm would load and never let the user in
            // (the check is Argon2id's), or, for argon2i/argon2d, let in
            // through a hash weaker than the one documented.
            if hash.algorithm != argon2::Algorithm::Argon2id.ident() {
                return Err(format!(
                    "user {:?}: password_hash uses {}; hierad takes Argon2id ($argon2id$…) only: \
                     make one with `hierad auth add-user --replace`",
                    user.name, hash.algorithm
                ));
            }
            check_environments(
                &format!("user {:?}", user.name),
                user.environments.as_deref(),
            )?;
        }
        let mut names = HashSet::new();
        // Digest (lowercase, as the server compares it) → the entry's name.
        let mut digests: HashMap<String, &str> = HashMap::new();
        for token in &self.tokens {
            if !names.insert(&token.name) {
                return Err(format!("token {:?} is listed twice", token.name));
            }
            // One token under two names is whichever entry the server
            // takes, with its role, and revoking one name leaves it working.
            if let Some(first) = digests.insert(token.sha256.to_ascii_lowercase(), &token.name) {
                return Err(format!(
                    "tokens {first:?} and {:?} have the same sha256: they are one token under two names, \
                     and revoking one would leave it working; keep one entry",
                    token.name
                ));
            }
            // The name is how it is revoked and what history and the log
            // show as its author.
            if token.name.is_empty() || token.name.chars().any(char::is_control) {
                return Err(format!(
                    "token {:?}: a token name must be non-empty, without control characters",
                    token.name
                ));
            }
            if token.sha256.len() != 64 || !token.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!(
                    "token {:?}: sha256 must be 64 hex digits; make one with `hierad auth add-token`",
                    token.name
                ));
            }
            if let Some(when) = &token.expires_at {
                parse_time(when).map_err(|e| format!("token {:?}: {e}", token.name))?;
            }
            check_environments(
                &format!("token {:?}", token.name),
                token.environments.as_deref(),
            )?;
        }
        for (i, cert) in self.client_certs.iter().enumerate() {
            let entry = format!("#{}", i + 1);
            match (cert.cn.as_deref(), cert.san.as_deref()) {
                (Some(_), Some(_)) | (None, None) => {
                    return Err(format!(
                        "client_cert {entry}: give exactly one of cn and san"
                    ));
                }
                (Some(""), None) | (None, Some("")) => {
                    let field = if cert.cn.is_some() { "cn" } else { "san" };
                    return Err(format!(
                        "client_cert {entry}: {field} is empty; name the certificate's {field} it maps"
                    ));
                }
                _ => {}
            }
            check_environments(
                &format!("client_cert {entry}"),
                cert.environments.as_deref(),
            )?;
        }
        if let Some(keystone) = &self.keystone {
            if keystone.roles.is_empty() {
                return Err(
                    "keystone.roles maps no Keystone role to a hierad role; nobody could sign in"
                        .to_owned(),
                );
            }
            // Not repeated: it holds a password.
            if super::url_names_user(&keystone.url) {
                return Err(
                    "keystone.url holds credentials (USER:PASSWORD@HOST), which hierad \
                     does not send and would log with the URL; the service account is \
                     keystone.user with keystone.password_file"
                        .to_owned(),
                );
            }
        }
        if let Some(projects) = self.keystone.as_ref().and_then(|k| k.projects.as_ref()) {
            for (project, envs) in projects {
                check_environments(&format!("keystone.projects {project:?}"), Some(envs))?;
            }
        }
        Ok(())
    }

    /// What loads but is likely a mistake, one sentence each, for the
    /// server to log (as a warning, naming the file) at every load and
    /// `hierad auth list` to print: a file that lets nobody in, a password
    /// hash weaker than `hierad auth add-user` makes.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.users.is_empty()
            && self.tokens.is_empty()
            && self.client_certs.is_empty()
            && self.keystone.is_none()
        {
            warnings.push(
                "the auth file lets nobody in: it has no user, token, client_cert or keystone entry, \
                 so every request but /healthz and /readyz is refused 401; add one with `hierad auth add-user` or `add-token`"
                    .to_owned(),
            );
        }
        let (m, t) = (
            argon2::Params::DEFAULT_M_COST,
            argon2::Params::DEFAULT_T_COST,
        );
        for user in &self.users {
            let Ok(hash) = argon2::password_hash::PasswordHash::new(&user.password_hash) else {
                continue;
            };
            let Ok(params) = argon2::Params::try_from(&hash) else {
                continue;
            };
            if params.m_cost() < m || params.t_cost() < t {
                warnings.push(format!(
                    "user {:?}: its password hash costs m={} KiB, t={} passes, less than the m={m}, t={t} \
                     `hierad auth add-user` uses, so a stolen file gives its password up faster; \
                     hash it again with `hierad auth add-user --replace`",
                    user.name,
                    params.m_cost(),
                    params.t_cost()
                ));
            }
        }
        warnings
    }
}

/// What is wrong with `text` where it is not an auth file's TOML: the
/// line and column, and the parser's `message` without what the file says
/// there. The parser's own text quotes the line, and the line may be a
/// password hash or a token's digest, which must not reach a log.
pub(super) fn not_toml(text: &str, message: &str, span: Option<std::ops::Range<usize>>) -> String {
    let span = span.unwrap_or(0..0);
    let before = text.get(..span.start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    // The value the message quotes (`unknown variant `…``, `invalid type:
    // string `…``) is the file's text: left out. Names the parser offers
    // (`expected one of `read`, …`) and keys (`unknown field `…``) stay.
    let wrote = text.get(span).unwrap_or_default().trim_matches(['"', '\'']);
    // serde quotes a value of the wrong type as Rust's Debug does
    // (`invalid type: string "…"`).
    let message = if wrote.is_empty() {
        message.to_owned()
    } else {
        message.replace(&format!("{wrote:?}"), "(the value, not shown)")
    };
    let mut shown = String::new();
    for (i, part) in message.split('`').enumerate() {
        match (
            i % 2,
            part == wrote && !message.starts_with("unknown field"),
        ) {
            (1, true) => shown.push_str("(the value, not shown)"),
            (1, false) => {
                shown.push('`');
                shown.push_str(part);
                shown.push('`');
            }
            _ => shown.push_str(part),
        }
    }
    format!("line {line}, column {column}: {}", shown.trim_end())
}

/// An entry's `environments`: absent (every environment) or some; `[]`
/// would limit it to none, which is surely not what was meant.
fn check_environments(entry: &str, environments: Option<&[i64]>) -> Result<(), String> {
    if environments.is_some_and(<[i64]>::is_empty) {
        return Err(format!(
            "{entry}: environments = [] would limit it to no environment; \
             list the environments it may use, or leave environments out for all of them"
        ));
    }
    Ok(())
}

/// An RFC 3339 time (`2027-01-31T00:00:00Z`).
///
/// # Errors
///
/// Says what form is expected.
pub(crate) fn parse_time(text: &str) -> Result<jiff::Timestamp, String> {
    text.parse::<jiff::Timestamp>()
        .map_err(|e| format!("{text:?} is not an RFC 3339 time such as 2027-01-31T00:00:00Z ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::edit::{NewUser, add_user, revoke_token};

    #[test]
    fn a_token_needs_a_name() {
        let sha = "ab".repeat(32);
        for name in ["", "a\nb"] {
            let text = format!("[[token]]\nname = {name:?}\nrole = \"read\"\nsha256 = \"{sha}\"\n");
            let err = AuthFile::parse(&text).unwrap_err();
            assert!(err.contains("a token name must be non-empty"), "{err}");
        }
        let text =
            format!("[[token]]\nname = \"ci: puppet\"\nrole = \"read\"\nsha256 = \"{sha}\"\n");
        assert!(AuthFile::parse(&text).is_ok());
    }

    #[test]
    fn an_unreadable_file_says_why_once() {
        let dir = tempfile::tempdir().unwrap();
        let err = AuthFile::load(&dir.path().join("absent.toml")).unwrap_err();
        // As every command prints it: the whole chain.
        let text = format!("{:#}", anyhow::Error::from(err));
        assert_eq!(text.matches("No such file").count(), 1, "{text}");
        assert!(text.contains("absent.toml"), "{text}");
    }

    #[test]
    fn a_keystone_url_naming_a_user_is_refused_unrepeated() {
        let file = |url: &str| {
            format!(
                "[keystone]\nurl = \"{url}\"\nuser = \"hierad\"\npassword_file = \"/k\"\n\
                 project = \"service\"\n[keystone.roles]\nreader = \"read\"\n"
            )
        };
        assert!(AuthFile::parse(&file("https://keystone:5000/v3")).is_ok());
        let err = AuthFile::parse(&file("https://svc:Ks-pw-77@keystone:5000/v3")).unwrap_err();
        assert!(err.contains("keystone.url holds credentials"), "{err}");
        assert!(!err.contains("Ks-pw-77"), "{err}");
    }

    #[test]
    fn user_names_cannot_pass_for_other_principals() {
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$ZGlnZXN0ZGlnZXN0ZGlnZXN0";
        for name in ["token:ci", "local:root", ""] {
            let text =
                format!("[[user]]\nname = {name:?}\nrole = \"read\"\npassword_hash = \"{hash}\"\n");
            let err = AuthFile::parse(&text).unwrap_err();
            assert!(err.contains("without ':'"), "{name:?}: {err}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.toml");
        std::fs::write(&path, "").unwrap();
        let user = NewUser {
            name: "keystone:mel",
            role: Role::Admin,
            environments: None,
            password_hash: hash.to_owned(),
            replace: false,
            decrypt: false,
        };
        let err = add_user(&path, &user).unwrap_err().to_string();
        assert!(err.contains("without ':'"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    }

    #[test]
    fn the_documented_example_loads() {
        let text = include_str!("../../docs/auth.example.toml");
        let file = AuthFile::parse(text).unwrap();
        assert_eq!(
            (file.users.len(), file.tokens.len(), file.client_certs.len()),
            (1, 1, 2)
        );
        let hash = argon2::password_hash::PasswordHash::new(&file.users[0].password_hash).unwrap();
        use argon2::password_hash::PasswordVerifier;
        assert!(
            argon2::Argon2::default()
                .verify_password(b"example-only", &hash)
                .is_ok()
        );
        // Its commented-out Keystone section, switched on, loads too.
        let keystone: String = text
            .lines()
            .skip_while(|l| !l.starts_with("# [keystone]"))
            .map(|l| format!("{}\n", l.trim_start_matches("# ")))
            .collect();
        let file = AuthFile::parse(&keystone).unwrap();
        let keystone = file.keystone.unwrap();
        assert_eq!(keystone.roles.len(), 3);
        assert_eq!(keystone.projects.unwrap()["ops"], [1, 2]);
    }

    #[test]
    fn what_loads_but_is_likely_a_mistake_is_warned_of() {
        let empty = AuthFile::parse("# nothing yet\n").unwrap().warnings();
        assert_eq!(empty.len(), 1);
        assert!(
            empty[0].starts_with("the auth file lets nobody in"),
            "{empty:?}"
        );
        let user = |name: &str, params: &str| {
            format!(
                "[[user]]\nname = \"{name}\"\nrole = \"read\"\n\
                 password_hash = \"$argon2id$v=19${params}$c2FsdHNhbHQ$ZGlnZXN0ZGlnZXN0ZGlnZXN0\"\n"
            )
        };
        let text = [
            user("ok", "m=19456,t=2,p=1"),
            user("weak", "m=8,t=1,p=1"),
            user("few-passes", "m=65536,t=1,p=4"),
        ]
        .concat();
        let warnings = AuthFile::parse(&text).unwrap().warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].starts_with("user \"weak\": its password hash costs m=8 KiB, t=1 passes, less than the m=19456, t=2"),
            "{warnings:?}"
        );
        assert!(
            warnings[1].starts_with("user \"few-passes\""),
            "{warnings:?}"
        );
        // What `hierad auth add-user` makes is not warned of.
        let made = crate::auth::credentials::hash_password("pw").unwrap();
        let text = format!("[[user]]\nname = \"a\"\nrole = \"read\"\npassword_hash = \"{made}\"\n");
        assert_eq!(
            AuthFile::parse(&text).unwrap().warnings(),
            Vec::<String>::new()
        );
    }

    /// The parser's own message quotes the broken line, here a password
    /// hash (and a token digest): only the line and column are named.
    #[test]
    fn a_syntax_error_names_its_place_not_the_line() {
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$ZGlnZXN0ZGlnZXN0ZGlnZXN0";
        let cases = [
            (
                format!("[[user]]\nname = \"a\"\nrole = \"read\"\npassword_hash = \"{hash}\n"),
                "line 4, column 85: invalid basic string, expected `\"`",
            ),
            (
                format!("[[user]]\nname = \"a\"\nrole = \"{hash}\"\n"),
                "line 3, column 8: unknown variant (the value, not shown), expected one of `read`, `write`, `admin`",
            ),
            (
                format!(
                    "[[token]]\nname = \"t\"\nrole = \"read\"\nsha256 = {}\n",
                    "ab".repeat(32)
                ),
                "line 4, column 10:",
            ),
            (
                "[[user]]\nname = \"a\"\nrole = \"read\"\npasswd_hash = \"x\"\n".to_owned(),
                "line 4, column 1: unknown field `passwd_hash`, expected one of",
            ),
        ];
        for (text, message) in cases {
            let error = AuthFile::parse(&text).unwrap_err();
            assert!(error.starts_with(message), "{message} in {error}");
            assert!(
                !error.contains("argon2id") && !error.contains("abab"),
                "{error}"
            );
        }
        // `hierad auth` commands, which parse the file twice, say the same.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.toml");
        std::fs::write(&path, format!("[[user]]\npassword_hash = \"{hash}\n")).unwrap();
        let error = revoke_token(&path, "x").unwrap_err().to_string();
        assert!(error.contains("line 2, column 85"), "{error}");
        assert!(!error.contains("argon2id"), "{error}");
    }

    #[test]
    fn decrypt_is_granted_entry_by_entry() {
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$ZGlnZXN0ZGlnZXN0ZGlnZXN0";
        let sha = "ab".repeat(32);
        let text = format!(
            "[[user]]\nname = \"master\"\nrole = \"read\"\ndecrypt = true\npassword_hash = \"{hash}\"\n\
             [[user]]\nname = \"ops\"\nrole = \"admin\"\npassword_hash = \"{hash}\"\n\
             [[token]]\nname = \"ci\"\nrole = \"read\"\nsha256 = \"{sha}\"\ndecrypt = false\n\
             [[client_cert]]\ncn = \"puppet\"\nrole = \"read\"\ndecrypt = true\n\
             [keystone]\nurl = \"https://keystone:5000/v3\"\nuser = \"hierad\"\npassword_file = \"/k\"\n\
             project = \"service\"\ndecrypt = true\n[keystone.roles]\nreader = \"read\"\n"
        );
        let file = AuthFile::parse(&text).unwrap();
        // Not by role: the admin may not, the reader may.
        assert!(file.users[0].decrypt && !file.users[1].decrypt);
        assert!(!file.tokens[0].decrypt && file.client_certs[0].decrypt);
        assert!(file.keystone.unwrap().decrypt);
        let wrong = format!(
            "[[user]]\nname = \"a\"\nrole = \"read\"\ndecrypt = \"yes\"\npassword_hash = \"{hash}\"\n"
        );
        let err = AuthFile::parse(&wrong).unwrap_err();
        assert!(
            err.contains("line 4") && err.contains("expected a boolean"),
            "{err}"
        );
        assert!(!err.contains("yes"), "{err}");
    }

    #[test]
    fn mistakes_are_named() {
        let cases = [
            (
                "[[user]]\nname = \"a\"\nrole = \"boss\"\npassword_hash = \"x\"\n",
                "line 3, column 8: unknown variant (the value, not shown), expected one of `read`, `write`, `admin`",
            ),
            (
                "[[user]]\nname = \"a\"\nrole = \"read\"\npassword_hash = \"x\"\n",
                "not a PHC hash",
            ),
            (
                "[[token]]\nname = \"t\"\nrole = \"read\"\nsha256 = \"12\"\n",
                "64 hex digits",
            ),
            (
                "[[client_cert]]\nrole = \"read\"\n",
                "exactly one of cn and san",
            ),
            ("[[tokens]]\nname = \"t\"\n", "unknown field"),
            (
                "[[user]]\nname = \"a\"\nrole = \"read\"\npassword_hash = \"$pbkdf2-sha256$i=1000$c2FsdHNhbHQ$ZGlnZXN0ZGlnZXN0ZGlnZXN0\"\n",
                "user \"a\": password_hash uses pbkdf2-sha256; hierad takes Argon2id ($argon2id$…) only",
            ),
            (
                "[[user]]\nname = \"a\"\nrole = \"read\"\npassword_hash = \"$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$ZGlnZXN0ZGlnZXN0ZGlnZXN0\"\n",
                "user \"a\": password_hash uses argon2i;",
            ),
            (
                "[[user]]\nname = \"a\"\nrole = \"read\"\nenvironments = []\npassword_hash = \"$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$ZGlnZXN0ZGlnZXN0ZGlnZXN0\"\n",
                "user \"a\": environments = [] would limit it to no environment",
            ),
            (
                "[[token]]\nname = \"t\"\nrole = \"read\"\nenvironments = []\nsha256 = \"0000000000000000000000000000000000000000000000000000000000000000\"\n",
                "token \"t\": environments = [] would limit it to no environment",
            ),
            (
                "[[client_cert]]\ncn = \"\"\nrole = \"read\"\n",
                "client_cert #1: cn is empty",
            ),
            (
                "[[client_cert]]\ncn = \"p\"\nrole = \"read\"\n[[client_cert]]\nsan = \"\"\nrole = \"read\"\n",
                "client_cert #2: san is empty",
            ),
            (
                "[[client_cert]]\ncn = \"p\"\nrole = \"read\"\nenvironments = []\n",
                "client_cert #1: environments = []",
            ),
            (
                &format!(
                    "[[token]]\nname = \"ci\"\nrole = \"read\"\nsha256 = \"{}\"\n\
                     [[token]]\nname = \"old\"\nrole = \"admin\"\nsha256 = \"{}\"\n",
                    "ab".repeat(32),
                    "AB".repeat(32)
                ),
                "tokens \"ci\" and \"old\" have the same sha256: they are one token under two names",
            ),
        ];
        for (text, message) in cases {
            let error = AuthFile::parse(text).unwrap_err();
            assert!(error.contains(message), "{message} in {error}");
        }
        let expiry = format!(
            "[[token]]\nname = \"t\"\nrole = \"read\"\nsha256 = \"{}\"\nexpires_at = \"tomorrow\"\n",
            "0".repeat(64)
        );
        assert!(AuthFile::parse(&expiry).unwrap_err().contains("RFC 3339"));
    }
}
