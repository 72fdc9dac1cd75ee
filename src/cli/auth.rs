//! `hierad auth`: edit the auth file `hierad serve --auth` reads (users,
//! tokens). Passwords come from a prompt or a file, never from the
//! command line (which every user of the machine can read in `ps`);
//! a new token is printed once and only its SHA-256 is kept.

use crate::auth::edit::{self, NewToken, NewUser};
use crate::auth::file;
use crate::auth::{AuthFile, Authenticator, Role, credentials};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Manage the users and tokens of an auth file (docs/security.md).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub command: AuthCommand,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum AuthCommand {
    /// Add a user who signs in with HTTP Basic (password hashed with
    /// Argon2); servers reading the file take it within 2 s
    AddUser(AddUser),
    /// Create a bearer token, print it once, keep only its SHA-256
    AddToken(AddToken),
    /// Remove a token: servers reading the file refuse it (401) within
    /// 2 s
    RevokeToken(RevokeToken),
    /// Remove a user: servers reading the file refuse its password (401)
    /// within 2 s
    RemoveUser(RemoveUser),
    /// Check the file as the server loads it (exit 1 naming the problem
    /// if a server would refuse it) and list who it lets in, never a hash
    List(List),
}

/// The file and what the entry may do.
#[derive(Debug, clap::Args)]
pub(crate) struct Entry {
    /// The auth file (created, mode 0600, if missing)
    #[arg(long, env = "HIERAD_AUTH", value_name = "FILE")]
    pub file: PathBuf,
    /// read, write or admin
    #[arg(long)]
    pub role: Role,
    /// Limit it to this environment (repeat for several; default: all)
    #[arg(long = "env", value_name = "ID")]
    pub environments: Vec<i64>,
    /// It may read eyaml ENC[PKCS7,…] values decrypted, whatever its role
    /// (`decrypt = true`; docs/security.md, "Secrets")
    #[arg(long)]
    pub decrypt: bool,
}

impl Entry {
    fn environments(&self) -> Option<&[i64]> {
        (!self.environments.is_empty()).then_some(self.environments.as_slice())
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct AddUser {
    /// The user name
    pub name: String,
    #[command(flatten)]
    pub entry: Entry,
    /// Read the password from this file's first line instead of a prompt
    #[arg(long, value_name = "PATH")]
    pub password_file: Option<PathBuf>,
    /// Replace the user's entry if it exists (a new password, role or
    /// environments)
    #[arg(long)]
    pub replace: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct AddToken {
    /// A name for the token (the access log and history show it; revoke
    /// it by this name)
    pub name: String,
    #[command(flatten)]
    pub entry: Entry,
    /// When it stops working: a time (2027-01-31T00:00:00Z) or a duration
    /// from now (90d, 12h)
    #[arg(long, value_name = "WHEN")]
    pub expires: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RevokeToken {
    /// The token's name
    pub name: String,
    /// The auth file
    #[arg(long, env = "HIERAD_AUTH", value_name = "FILE")]
    pub file: PathBuf,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RemoveUser {
    /// The user name
    pub name: String,
    /// The auth file
    #[arg(long, env = "HIERAD_AUTH", value_name = "FILE")]
    pub file: PathBuf,
}

#[derive(Debug, clap::Args)]
pub(crate) struct List {
    /// The auth file
    #[arg(long, env = "HIERAD_AUTH", value_name = "FILE")]
    pub file: PathBuf,
}

/// Runs `hierad auth …`.
///
/// # Errors
///
/// The file is invalid or cannot be written; a bad password source.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let report = match args.command {
        AuthCommand::AddUser(add) => add_user(&add),
        AuthCommand::AddToken(add) => add_token(&add),
        AuthCommand::RevokeToken(revoke) => edit::revoke_token(&revoke.file, &revoke.name)
            .map(|()| {
                format!(
                    "revoked the token {:?}; servers reading the file refuse it within 2 s",
                    revoke.name
                )
            })
            .map_err(Into::into),
        AuthCommand::RemoveUser(remove) => edit::remove_user(&remove.file, &remove.name)
            .map(|()| {
                format!(
                    "removed the user {:?}; servers reading the file refuse it within 2 s",
                    remove.name
                )
            })
            .map_err(Into::into),
        AuthCommand::List(list) => Authenticator::load(&list.file)
            .map(|(file, _)| {
                for warning in file.warnings() {
                    eprintln!("hierad: warning: {warning}");
                }
                listing(&file, jiff::Timestamp::now())
            })
            .map_err(Into::into),
    };
    Ok(super::report(report))
}

/// Who `file` lets in, one line each, as of `now` (an expired token is
/// said to be refused).
fn listing(file: &AuthFile, now: jiff::Timestamp) -> String {
    let limited = |environments: Option<&Vec<i64>>| match environments {
        None => String::new(),
        Some(ids) => format!(", environments {}", join(ids)),
    };
    let mut lines = Vec::new();
    for u in &file.users {
        let env = limited(u.environments.as_ref());
        lines.push(format!("user {}: {}{env}", u.name, u.role));
    }
    for t in &file.tokens {
        let env = limited(t.environments.as_ref());
        let expiry = match t.expires_at.as_deref() {
            None => String::new(),
            Some(text) => match file::parse_time(text) {
                Ok(at) if at <= now => format!(", expired {text} (refused)"),
                _ => format!(", expires {text}"),
            },
        };
        lines.push(format!("token {}: {}{env}{expiry}", t.name, t.role));
    }
    for c in &file.client_certs {
        let env = limited(c.environments.as_ref());
        let mut names = Vec::new();
        names.extend(c.cn.as_deref().map(|cn| format!("cn={cn}")));
        names.extend(c.san.as_deref().map(|san| format!("san={san}")));
        lines.push(format!(
            "client certificate {}: {}{env}",
            names.join(" "),
            c.role
        ));
    }
    if let Some(k) = &file.keystone {
        let roles: Vec<String> = k
            .roles
            .iter()
            .map(|(ks, r)| format!("{ks} → {r}"))
            .collect();
        let projects = match &k.projects {
            None => "tokens of every project".to_owned(),
            Some(map) => {
                let each: Vec<String> = map
                    .iter()
                    .map(|(p, ids)| format!("{p} → environments {}", join(ids)))
                    .collect();
                format!("tokens of projects {}", each.join(", "))
            }
        };
        let ca = k
            .ca_file
            .as_ref()
            .map(|ca| format!("; its CA {}", ca.display()))
            .unwrap_or_default();
        lines.push(format!(
            "keystone {}, as {}@{} in project {}@{}: roles {}; {projects}{ca}",
            k.url,
            k.user,
            k.user_domain,
            k.project,
            k.project_domain,
            roles.join(", ")
        ));
    }
    if lines.is_empty() {
        return "no users, tokens, client certificate rules or Keystone: a server reading the file lets nobody in".to_owned();
    }
    lines.join("\n")
}

fn join(ids: &[i64]) -> String {
    ids.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn add_user(add: &AddUser) -> anyhow::Result<String> {
    let password = match &add.password_file {
        Some(path) => read_password_file(path)?,
        None => prompt_new_password(&add.name)?,
    };
    if password.is_empty() {
        bail!("the password is empty");
    }
    let hash = credentials::hash_password(&password).map_err(anyhow::Error::msg)?;
    edit::add_user(
        &add.entry.file,
        &NewUser {
            name: &add.name,
            role: add.entry.role,
            environments: add.entry.environments(),
            password_hash: hash,
            replace: add.replace,
            decrypt: add.entry.decrypt,
        },
    )?;
    Ok(format!(
        "{} user {:?} ({}) in {}; servers reading the file take it within 2 s",
        if add.replace { "wrote" } else { "added" },
        add.name,
        add.entry.role,
        add.entry.file.display()
    ))
}

fn add_token(add: &AddToken) -> anyhow::Result<String> {
    let now = jiff::Timestamp::now();
    let expires_at = add
        .expires
        .as_deref()
        .map(|text| future_expiry(text, now))
        .transpose()?;
    let (token, sha256) = credentials::new_token().map_err(anyhow::Error::msg)?;
    edit::add_token(
        &add.entry.file,
        &NewToken {
            name: &add.name,
            role: add.entry.role,
            environments: add.entry.environments(),
            sha256,
            expires_at,
            decrypt: add.entry.decrypt,
        },
    )?;
    eprintln!(
        "added the token {:?} ({}) to {}; it is shown once, below; servers reading the file take it within 2 s",
        add.name,
        add.entry.role,
        add.entry.file.display()
    );
    Ok(token)
}

/// `--expires`: an RFC 3339 time, or a duration from now.
fn expiry(text: &str) -> anyhow::Result<jiff::Timestamp> {
    if let Ok(when) = file::parse_time(text) {
        return Ok(when);
    }
    let (number, unit) = text.split_at(text.trim_end_matches(char::is_alphabetic).len());
    let seconds: i64 = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" => 1,
        _ => 0,
    };
    let count: i64 = number.parse().unwrap_or(0);
    if seconds == 0 || count <= 0 {
        bail!(
            "--expires {text:?}: give a time such as 2027-01-31T00:00:00Z or a duration such as 90d, 12h, 30m"
        );
    }
    Ok(jiff::Timestamp::now() + jiff::SignedDuration::from_secs(count.saturating_mul(seconds)))
}

/// `--expires` for a new token: [`expiry`], and not already past (such a
/// token would be refused from its first use).
fn future_expiry(text: &str, now: jiff::Timestamp) -> anyhow::Result<jiff::Timestamp> {
    let when = expiry(text)?;
    if when <= now {
        bail!(
            "--expires {text:?} is in the past (now is {now}): the token would never work; give a later time or a duration such as 90d"
        );
    }
    Ok(when)
}

/// The first line of `path`.
///
/// # Errors
///
/// It cannot be read.
pub(crate) fn read_password_file(path: &Path) -> anyhow::Result<String> {
    read_first_line("password file", path)
}

/// The first line of the file at `path`, a secret (`what` names it in
/// the error). Read as the server reads its secret files: a FIFO or a
/// device is refused, naming what it is, never waited on.
///
/// # Errors
///
/// It cannot be read, or is not a regular file.
pub(crate) fn read_first_line(what: &str, path: &Path) -> anyhow::Result<String> {
    let text = crate::config_file::read_to_string(path)
        .with_context(|| format!("cannot read the {what} {}", path.display()))?;
    Ok(text.lines().next().unwrap_or_default().to_owned())
}

fn prompt_new_password(user: &str) -> anyhow::Result<String> {
    let first = rpassword::prompt_password(format!("password for {user}: "))
        .context("cannot read a password from the terminal (give --password-file)")?;
    let again = rpassword::prompt_password("again: ")
        .context("cannot read a password from the terminal (give --password-file)")?;
    if first != again {
        bail!("the passwords differ");
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_listing_names_every_entry_and_no_hash() {
        let hash = "0".repeat(64);
        let text = format!(
            "[[user]]\nname = \"alice\"\nrole = \"admin\"\npassword_hash = \"$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g\"\n\
             [[token]]\nname = \"ci\"\nrole = \"read\"\nsha256 = \"{hash}\"\nenvironments = [1, 2]\nexpires_at = \"2027-01-31T00:00:00Z\"\n\
             [[token]]\nname = \"old\"\nrole = \"write\"\nsha256 = \"{}\"\nexpires_at = \"2026-01-01T00:00:00Z\"\n\
             [[client_cert]]\ncn = \"puppet.example.com\"\nrole = \"read\"\n\
             [keystone]\nurl = \"http://ks:5000/v3\"\nuser = \"hierad\"\npassword_file = \"/p\"\nproject = \"service\"\n\
             [keystone.roles]\nreader = \"read\"\nmember = \"write\"\n[keystone.projects]\nops = [3]\n",
            "1".repeat(64)
        );
        let file = crate::auth::AuthFile::parse(&text).unwrap();
        let now: jiff::Timestamp = "2026-11-27T00:00:00Z".parse().unwrap();
        assert_eq!(
            super::listing(&file, now),
            "user alice: admin\n\
             token ci: read, environments 1, 2, expires 2027-01-31T00:00:00Z\n\
             token old: write, expired 2026-01-01T00:00:00Z (refused)\n\
             client certificate cn=puppet.example.com: read\n\
             keystone http://ks:5000/v3, as hierad@Default in project service@Default: roles member → write, reader → read; tokens of projects ops → environments 3"
        );
        assert_eq!(
            super::listing(&crate::auth::AuthFile::default(), now),
            "no users, tokens, client certificate rules or Keystone: a server reading the file lets nobody in"
        );
    }

    #[test]
    fn expiries_are_times_or_durations() {
        let now = jiff::Timestamp::now();
        let in_90d = super::expiry("90d").unwrap();
        let days = (in_90d - now).get_days() + (in_90d - now).get_hours() / 24;
        assert!(
            (in_90d.as_second() - now.as_second() - 90 * 86_400).abs() < 5,
            "{days}"
        );
        assert_eq!(
            super::expiry("2027-01-31T00:00:00Z").unwrap().to_string(),
            "2027-01-31T00:00:00Z"
        );
        for bad in ["soon", "0d", "-3h", "12y"] {
            assert!(super::expiry(bad).is_err(), "{bad}");
        }
        // A new token that expired before it was made is refused.
        let past = super::future_expiry("2020-01-01T00:00:00Z", now).unwrap_err();
        assert!(
            past.to_string()
                .starts_with("--expires \"2020-01-01T00:00:00Z\" is in the past"),
            "{past}"
        );
        assert!(super::future_expiry("90d", now).is_ok());
    }

    /// `--password-file`/`--token-file` naming a FIFO waited on it for
    /// good; now refused at once, as the server refuses one.
    #[test]
    fn a_fifo_for_a_secret_file_is_refused_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pw");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(super::read_password_file(&fifo).map_err(|e| format!("{e:#}")));
        });
        let read = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("still waiting on the FIFO after 5 s");
        let error = read.unwrap_err();
        assert!(
            error.starts_with("cannot read the password file") && error.contains("FIFO"),
            "{error}"
        );
    }
}
