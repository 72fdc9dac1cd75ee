//! The arguments several subcommands share: where the ConfigDB is
//! (`--server URL`, `HIERAD_SERVER`, or `--db PATH`) and which environment
//! and level a command is about (`--env`, `--level`).

use crate::configdb::LevelPath;
use crate::ops::remote::ClientAuth;
use crate::ops::remote::Timeouts;
use crate::ops::{ConfigOps, Local, Remote};
use anyhow::{Context, bail};
use std::path::PathBuf;
use std::time::Duration;

/// The database `hierad serve` uses by default.
pub(crate) use crate::settings::DEFAULT_DB;

/// The environment variable naming the default server.
pub(crate) const SERVER_ENV: &str = "HIERAD_SERVER";

/// Where the ConfigDB is: a server or a local database file.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Conn {
    /// The hierad server to talk to, http://HOST:PORT (default: $HIERAD_SERVER;
    /// without either, the local database --db)
    #[arg(long, value_name = "URL")]
    pub(crate) server: Option<String>,
    /// Work on this database directly instead of a server: a SQLite file
    /// (default: hierad.db, the file `hierad serve` uses) or a PostgreSQL
    /// URL, postgres://USER@HOST/DB
    #[arg(long, value_name = "PATH", conflicts_with = "server")]
    pub(crate) db: Option<PathBuf>,
    /// Seconds to wait for the server's connection to open
    #[arg(long, value_name = "SECS", default_value = Timeouts::CONNECT_DEFAULT, value_parser = seconds)]
    pub(crate) connect_timeout: Duration,
    /// Seconds the server may stay silent once connected [default: 30 for
    /// a command that only reads, 120 for one that writes: a large import is
    /// processed before the server answers]
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub(crate) timeout: Option<Duration>,
    #[command(flatten)]
    pub(crate) client: ClientFlags,
}

impl Default for Conn {
    fn default() -> Conn {
        let timeouts = Timeouts::default();
        Conn {
            server: None,
            db: None,
            connect_timeout: timeouts.connect,
            timeout: None,
            client: ClientFlags::default(),
        }
    }
}

/// A timeout flag: a positive number of seconds (fractions allowed).
pub(crate) fn seconds(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!(
            "{text:?} is not a number of seconds (give a number above 0, at most 86400)"
        )),
    }
}

/// How to authenticate to a server and which CA to trust
/// (docs/security.md). Each has an environment variable, so
/// `hierad lookup --server` (whose flags follow the `hiera` command's)
/// takes them too.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct ClientFlags {
    /// A bearer token (default: $HIERAD_TOKEN)
    #[arg(
        long,
        env = "HIERAD_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: Option<String>,
    /// The first line of this file is the bearer token (kept out of the
    /// command line, which every user of the machine can read)
    #[arg(
        long,
        env = "HIERAD_TOKEN_FILE",
        value_name = "PATH",
        conflicts_with = "token"
    )]
    pub token_file: Option<PathBuf>,
    /// A user for HTTP Basic; the password from --password-file or a prompt
    #[arg(
        long,
        env = "HIERAD_USER",
        value_name = "NAME",
        conflicts_with_all = ["token", "token_file"]
    )]
    pub user: Option<String>,
    /// The first line of this file is --user's password
    #[arg(
        long,
        env = "HIERAD_PASSWORD_FILE",
        value_name = "PATH",
        requires = "user"
    )]
    pub password_file: Option<PathBuf>,
    /// A Keystone token, sent as X-Auth-Token (default: $OS_TOKEN)
    #[arg(long, env = "OS_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub os_token: Option<String>,
    /// CA certificates (PEM) that sign the server's certificate
    #[arg(long, env = "HIERAD_CACERT", value_name = "PEM")]
    pub cacert: Option<PathBuf>,
    /// A client certificate (PEM) for servers that map them to roles
    /// (`--key` is taken: `hierad config`'s key path)
    #[arg(
        long,
        env = "HIERAD_CLIENT_CERT",
        value_name = "PEM",
        requires = "client_key"
    )]
    pub client_cert: Option<PathBuf>,
    /// The private key of --client-cert (PEM)
    #[arg(
        long,
        env = "HIERAD_CLIENT_KEY",
        value_name = "PEM",
        requires = "client_cert"
    )]
    pub client_key: Option<PathBuf>,
}

impl ClientFlags {
    /// The flags' values from the environment alone (for commands that
    /// take no such flags).
    pub(crate) fn from_env() -> ClientFlags {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        ClientFlags {
            token: var("HIERAD_TOKEN"),
            token_file: var("HIERAD_TOKEN_FILE").map(PathBuf::from),
            user: var("HIERAD_USER"),
            password_file: var("HIERAD_PASSWORD_FILE").map(PathBuf::from),
            os_token: var("OS_TOKEN"),
            cacert: var("HIERAD_CACERT").map(PathBuf::from),
            client_cert: var("HIERAD_CLIENT_CERT").map(PathBuf::from),
            client_key: var("HIERAD_CLIENT_KEY").map(PathBuf::from),
        }
    }

    /// The client's credentials; asks for --user's password on the
    /// terminal when no --password-file gives it.
    ///
    /// # Errors
    ///
    /// The password cannot be read.
    pub(crate) fn auth(&self) -> anyhow::Result<ClientAuth> {
        let token = match &self.token_file {
            Some(path) => {
                let token = super::auth::read_first_line("token file", path)?;
                if token.is_empty() {
                    anyhow::bail!("the token file {} is empty", path.display());
                }
                Some(token)
            }
            None => self.token.clone(),
        };
        let authorization = match (&token, &self.user) {
            (Some(token), _) => Some(ClientAuth::bearer(token)),
            (None, Some(user)) => {
                let password = match &self.password_file {
                    Some(path) => super::auth::read_password_file(path)?,
                    None => rpassword::prompt_password(format!("password for {user}: ")).context(
                        "cannot read a password from the terminal (give --password-file)",
                    )?,
                };
                Some(ClientAuth::basic(user, &password))
            }
            (None, None) => None,
        };
        Ok(ClientAuth {
            authorization,
            keystone_token: self.os_token.clone(),
            ca_file: self.cacert.clone(),
            cert: self.client_cert.clone().zip(self.client_key.clone()),
        })
    }
}

/// What [`Conn`] resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Server(String),
    Db(PathBuf),
}

impl Conn {
    /// `--server`, then `--db`, then `$HIERAD_SERVER`, then the default
    /// database.
    pub(crate) fn target(&self) -> Target {
        self.target_with(std::env::var(SERVER_ENV).ok())
    }

    fn target_with(&self, env_server: Option<String>) -> Target {
        if let Some(server) = &self.server {
            Target::Server(server.clone())
        } else if let Some(db) = &self.db {
            Target::Db(db.clone())
        } else if let Some(server) = env_server.filter(|s| !s.trim().is_empty()) {
            Target::Server(server)
        } else {
            Target::Db(PathBuf::from(DEFAULT_DB))
        }
    }

    /// How long a command doing `access` waits for a server: `--timeout`,
    /// else the default for reads or for writes.
    pub(crate) fn timeouts(&self, access: Access) -> Timeouts {
        let defaults = if access == Access::Read {
            Timeouts::reads()
        } else {
            Timeouts::default()
        };
        Timeouts {
            connect: self.connect_timeout,
            read: self.timeout.unwrap_or(defaults.read),
        }
    }

    /// The operations on the target. A local database must exist unless
    /// `access` creates it, and accept writes if it writes.
    ///
    /// # Errors
    ///
    /// A bad server URL; a missing or unopenable database file; one that
    /// accepts no writes when `access` writes.
    pub(crate) fn open(&self, access: Access) -> anyhow::Result<Box<dyn ConfigOps>> {
        match self.target() {
            Target::Server(url) => Ok(Box::new(Remote::connect(
                &url,
                self.timeouts(access),
                self.client.auth()?,
            )?)),
            Target::Db(path) => {
                if access != Access::Create && !crate::store::is_url(&path) && !path.exists() {
                    bail!(
                        "no database at {}: give --db PATH, or --server URL (or set {SERVER_ENV})",
                        path.display()
                    );
                }
                let open = if access == Access::Read {
                    crate::store::open
                } else {
                    crate::store::open_writable
                };
                let store = open(&path).with_context(|| {
                    format!("cannot open the database {}", crate::store::describe(&path))
                })?;
                Ok(Box::new(Local::new(store)))
            }
        }
    }
}

/// What a command does with its target ([`Conn::open`]); a server
/// checks writes itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reads only: a database that accepts no writes will do.
    Read,
    /// Writes: the database must exist and accept writes.
    Write,
    /// Writes, creating the database file if there is none (`import`).
    Create,
}

/// `--env ID --level LEVEL=VALUE[,…]`: an environment and a level path in
/// it (the root when `--level` is not given).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct EnvLevel {
    /// The environment id
    #[arg(long, value_name = "ID")]
    pub(crate) env: i64,
    /// The level path, level=value[,level=value…], e.g. nodes=node-1.domain.tld
    /// (default: the environment-wide root)
    #[arg(
        long,
        value_name = "LEVEL=VALUE",
        default_value = "",
        hide_default_value = true,
        value_parser = LevelPath::parse_cli
    )]
    pub(crate) level: LevelPath,
}

impl EnvLevel {
    /// `--level` with the ConfigDB specification's spellings
    /// (docs/spec/configdb-api.md) understood against the environment's
    /// levels (`node=…` for the level `nodes`; see
    /// [`LevelPath::with_level_aliases`]); as given for the root or an
    /// environment that does not exist (the command then says so).
    ///
    /// # Errors
    ///
    /// Failing to ask for the environment.
    pub(crate) fn path_in(&self, db: &dyn ConfigOps) -> anyhow::Result<LevelPath> {
        if self.level.is_root() {
            return Ok(self.level.clone());
        }
        Ok(match db.environment(self.env)? {
            Some(env) => self.level.with_level_aliases(&env.hierarchy_levels),
            None => self.level.clone(),
        })
    }

    /// How reports name the level: `the root` or `nodes=node-1`.
    pub(crate) fn shown_level(&self) -> String {
        if self.level.is_root() {
            "the root".to_owned()
        } else {
            self.level.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn connection_targets() {
        let conn = |server: Option<&str>, db: Option<&str>| Conn {
            server: server.map(str::to_owned),
            db: db.map(PathBuf::from),
            ..Conn::default()
        };
        let cases: Vec<(Conn, Option<&str>, Target)> = vec![
            (
                conn(None, None),
                None,
                Target::Db(PathBuf::from(DEFAULT_DB)),
            ),
            (
                conn(None, None),
                Some("http://h:1"),
                Target::Server("http://h:1".into()),
            ),
            (
                conn(None, None),
                Some(" "),
                Target::Db(PathBuf::from(DEFAULT_DB)),
            ),
            (
                conn(Some("http://s"), None),
                Some("http://h:1"),
                Target::Server("http://s".into()),
            ),
            (
                conn(None, Some("x.db")),
                Some("http://h:1"),
                Target::Db(PathBuf::from("x.db")),
            ),
        ];
        for (conn, env, want) in cases {
            assert_eq!(
                conn.target_with(env.map(str::to_owned)),
                want,
                "{conn:?} {env:?}"
            );
        }
    }

    #[derive(Debug, Parser)]
    struct ConnProbe {
        #[command(flatten)]
        conn: Conn,
    }

    #[test]
    fn timeouts_have_defaults_and_take_seconds() {
        let parse = |args: &[&str]| {
            ConnProbe::try_parse_from(std::iter::once("probe").chain(args.iter().copied()))
                .map(|p| p.conn)
        };
        // A read gives up on a silent server sooner than a write (an
        // import is processed before the answer).
        let plain = parse(&[]).unwrap();
        let read = plain.timeouts(Access::Read);
        assert_eq!(
            (read.connect, read.read),
            (Duration::from_secs(10), Duration::from_secs(30))
        );
        for access in [Access::Write, Access::Create] {
            assert_eq!(plain.timeouts(access).read, Duration::from_secs(120));
        }
        let set = parse(&["--connect-timeout", "0.5", "--timeout", "3"]).unwrap();
        for access in [Access::Read, Access::Write] {
            let got = set.timeouts(access);
            assert_eq!(
                (got.connect, got.read),
                (Duration::from_millis(500), Duration::from_secs(3))
            );
        }
        for bad in ["0", "-1", "x", "inf", "1e9"] {
            let flag = format!("--timeout={bad}");
            let err = parse(&[flag.as_str()]).unwrap_err().to_string();
            assert!(err.contains("is not a number of seconds"), "{bad}: {err}");
        }
    }

    #[derive(Debug, Parser)]
    struct Probe {
        #[command(flatten)]
        at: EnvLevel,
    }

    #[test]
    fn env_and_level_parse_into_a_level_path() {
        let parse = |args: &[&str]| {
            Probe::try_parse_from(std::iter::once("probe").chain(args.iter().copied()))
                .map(|p| p.at)
        };
        let root = parse(&["--env", "3"]).unwrap();
        assert_eq!((root.env, root.level.is_root()), (3, true));
        assert_eq!(root.shown_level(), "the root");
        let node = parse(&["--env", "1", "--level", "nodes=n1"]).unwrap();
        assert_eq!(node.level, LevelPath::parse_cli("nodes=n1").unwrap());
        assert_eq!(node.shown_level(), "nodes=n1");
        let err = parse(&["--env", "1", "--level", "nodes"]).unwrap_err();
        assert_eq!(
            super::super::level_error(&err).as_deref(),
            Some(
                "\"nodes\" in level path \"nodes\" is not of the form level=value (write name=value[,name=value…])"
            )
        );
        assert!(parse(&["--level", "nodes=n1"]).is_err());
    }
}
