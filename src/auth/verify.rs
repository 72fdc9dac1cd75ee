//! Proving who a request comes from: a request's credentials checked
//! against one loaded auth file. Passwords are Argon2 hashes (slow on
//! purpose: a stolen file must not give the passwords back), checked on
//! the password pool (`auth::pool`); a password once verified is
//! remembered for a while by a SHA-256 keyed with a random per-process
//! key (so the table, were memory read, gives no fast hash to test
//! guesses against), and keep-alive clients do not pay Argon2 on every
//! request. Tokens are 256 random bits, so one
//! SHA-256 suffices to store them: no dictionary reaches that space,
//! and the lookup by digest is a hash-map probe.

// Where the server's modules have always found them.
#[cfg(test)]
pub(crate) use super::credentials::hex;
pub(crate) use super::credentials::{CertIdentity, Credentials, credentials, sha256};
use super::credentials::{hash_password, unhex};
use super::file::{AuthFile, AuthFileError, CertEntry};
use super::keystone::Keystone;
use super::pool::PasswordPool;
use super::{Principal, Role, Via};
use argon2::password_hash::{PasswordHash, PasswordVerifier};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::watch;

/// Why a request is not authenticated (401, or 503 for Keystone down).
/// The messages name the principal at most, never a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error(
        "authentication required: send HTTP Basic credentials, a bearer token, a Keystone X-Auth-Token or a client certificate"
    )]
    Missing,
    #[error("malformed credentials: {0}")]
    Malformed(String),
    #[error("unknown user or wrong password")]
    WrongPassword,
    #[error("unknown token (revoked, or never issued by this server)")]
    UnknownToken,
    #[error("the token {name:?} expired at {at}")]
    Expired { name: String, at: String },
    #[error("no client_cert rule of the auth file maps the certificate of {0}")]
    UnknownCert(String),
    #[error("{0}")]
    NotAccepted(String),
    #[error("Keystone refused the token: {0}")]
    KeystoneRefused(String),
    #[error("Keystone cannot validate tokens now: {0}")]
    KeystoneDown(String),
    /// The password pool's queue is full (`auth::pool`): the password was
    /// not checked.
    #[error(
        "too many password checks are waiting; the password was not checked: try again in a moment (verified passwords, tokens and certificates are answered meanwhile)"
    )]
    Busy,
}

impl AuthError {
    /// Keystone's failure, or a full password queue, is the server's
    /// problem (503), not the client's.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, AuthError::KeystoneDown(_) | AuthError::Busy)
    }
}

struct User {
    hash: String,
    principal: Principal,
}

struct Token {
    principal: Principal,
    expires: Option<jiff::Timestamp>,
}

/// A verified password is trusted again without Argon2 for this long,
/// and a connection's proved credentials without any check
/// (`auth::remember`).
const VERIFIED_FOR: Duration = Duration::from_secs(300);

/// Keystone validations running at once, each on a blocking thread for
/// up to `keystone.timeout_secs`. More wait their turn on the async
/// workers: requests with new tokens to a hung Keystone (or an attacker's
/// made-up ones) would otherwise take every one of tokio's 512 blocking
/// threads, which the store's reads need too; and Keystone is asked no
/// more than this many things at once.
const KEYSTONE_CALLS: usize = 32;

/// The Argon2 checks under way, by [`Authenticator::verified_key`]: a
/// request whose credentials are being checked already waits for that
/// check's verdict (`Some(right)`) instead of queueing its own.
type Running = Mutex<HashMap<[u8; 32], Arc<watch::Sender<Option<bool>>>>>;

/// A principal proved, and how long its connection may present the same
/// credentials again without their check (`None`: check every time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Proved {
    pub principal: Principal,
    pub remember_for: Option<Duration>,
}

/// The credentials of one auth file, ready to check requests against.
/// Its `Debug` shows counts, never a hash.
pub struct Authenticator {
    users: HashMap<String, User>,
    tokens: HashMap<[u8; 32], Token>,
    certs: Vec<(CertEntry, Principal)>,
    keystone: Option<Arc<Keystone>>,
    /// [`Authenticator::verified_key`] → the principal, for passwords
    /// verified within [`VERIFIED_FOR`].
    verified: moka::sync::Cache<[u8; 32], Principal>,
    /// The random key of `verified`'s keys, new with every load.
    cache_key: [u8; 32],
    /// Where Argon2 checks run (each takes 19 MiB and a core): the
    /// server's, shared by every load of the file.
    pool: Arc<PasswordPool>,
    running: Arc<Running>,
    /// Calls to Keystone running at once ([`KEYSTONE_CALLS`]).
    keystone_calls: Arc<tokio::sync::Semaphore>,
    /// Checked for unknown users, so they take as long as known ones.
    decoy: String,
    /// Argon2 runs (the tests count them).
    #[cfg(test)]
    argon2_runs: Arc<std::sync::atomic::AtomicUsize>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("users", &self.users.len())
            .field("tokens", &self.tokens.len())
            .field("client_certs", &self.certs.len())
            .field("keystone", &self.keystone_url())
            .finish_non_exhaustive()
    }
}

fn principal(
    name: String,
    role: Role,
    envs: Option<&Vec<i64>>,
    via: Via,
    decrypt: bool,
) -> Principal {
    Principal {
        name: Arc::from(name),
        role,
        environments: envs.map(|e| Arc::from(e.as_slice())),
        via,
        decrypt,
    }
}

impl Authenticator {
    /// Reads the auth file at `path` and makes its authenticator, as the
    /// server does; the file too, for who shows it.
    ///
    /// # Errors
    ///
    /// As [`AuthFile::load`], and a Keystone password file that cannot be
    /// read.
    pub fn load(path: &std::path::Path) -> Result<(AuthFile, Authenticator), AuthFileError> {
        Authenticator::load_on(path, Arc::default())
    }

    /// [`Authenticator::load`], checking passwords on `pool`.
    ///
    /// # Errors
    ///
    /// As [`Authenticator::load`].
    pub(crate) fn load_on(
        path: &std::path::Path,
        pool: Arc<PasswordPool>,
    ) -> Result<(AuthFile, Authenticator), AuthFileError> {
        let file = AuthFile::load(path)?;
        let authenticator =
            Authenticator::with_pool(&file, pool).map_err(|message| AuthFileError::Unusable {
                path: path.to_owned(),
                message,
            })?;
        Ok((file, authenticator))
    }

    /// Ready to check requests against `file`, with a password pool of
    /// its own (the defaults of `auth::pool`).
    ///
    /// # Errors
    ///
    /// The Keystone service password file cannot be read.
    pub fn new(file: &AuthFile) -> Result<Authenticator, String> {
        Authenticator::with_pool(file, Arc::new(PasswordPool::default()))
    }

    /// Ready to check requests against `file`, checking passwords on
    /// `pool`.
    ///
    /// # Errors
    ///
    /// The Keystone service password file cannot be read.
    pub(crate) fn with_pool(
        file: &AuthFile,
        pool: Arc<PasswordPool>,
    ) -> Result<Authenticator, String> {
        let users = file
            .users
            .iter()
            .map(|u| {
                let user = User {
                    hash: u.password_hash.clone(),
                    principal: principal(
                        u.name.clone(),
                        u.role,
                        u.environments.as_ref(),
                        Via::Basic,
                        u.decrypt,
                    ),
                };
                (u.name.clone(), user)
            })
            .collect();
        let tokens = file
            .tokens
            .iter()
            .filter_map(|t| {
                let token = Token {
                    principal: principal(
                        format!("token:{}", t.name),
                        t.role,
                        t.environments.as_ref(),
                        Via::Bearer,
                        t.decrypt,
                    ),
                    expires: t.expires_at.as_deref().and_then(|e| e.parse().ok()),
                };
                Some((unhex(&t.sha256)?, token))
            })
            .collect();
        let certs = file
            .client_certs
            .iter()
            .map(|c| {
                let name = match (&c.cn, &c.san) {
                    (Some(cn), _) => format!("cert:{cn}"),
                    (None, san) => format!("cert:{}", san.as_deref().unwrap_or_default()),
                };
                let p = principal(
                    name,
                    c.role,
                    c.environments.as_ref(),
                    Via::ClientCert,
                    c.decrypt,
                );
                (c.clone(), p)
            })
            .collect();
        let keystone = file
            .keystone
            .as_ref()
            .map(|k| Keystone::new(k).map(Arc::new))
            .transpose()?;
        let mut cache_key = [0u8; 32];
        getrandom::fill(&mut cache_key).map_err(|e| format!("no randomness: {e}"))?;
        Ok(Authenticator {
            cache_key,
            users,
            tokens,
            certs,
            keystone,
            verified: moka::sync::Cache::builder()
                .max_capacity(10_000)
                .time_to_live(VERIFIED_FOR)
                .build(),
            pool,
            running: Arc::default(),
            keystone_calls: Arc::new(tokio::sync::Semaphore::new(KEYSTONE_CALLS)),
            decoy: hash_password("decoy").unwrap_or_default(),
            #[cfg(test)]
            argon2_runs: Arc::default(),
        })
    }

    /// The pool its passwords are checked on (a reload checks the new
    /// file's on the same one).
    pub(crate) fn pool(&self) -> &Arc<PasswordPool> {
        &self.pool
    }

    /// Whether Keystone tokens are accepted (for the 401 challenge).
    pub fn keystone_url(&self) -> Option<&str> {
        self.keystone.as_deref().map(Keystone::url)
    }

    /// How long a Keystone validation may take, if Keystone is configured.
    pub(crate) fn keystone_longest_validation(&self) -> Option<Duration> {
        self.keystone.as_deref().map(Keystone::longest_validation)
    }

    /// The Keystone service account's password file, if any.
    pub(crate) fn keystone_password_file(&self) -> Option<&std::path::Path> {
        self.keystone.as_deref().map(Keystone::password_file)
    }

    /// The files its Keystone section names (the password file, the CA
    /// file), if any: a reload watches them.
    pub(crate) fn keystone_files(&self) -> Vec<&std::path::Path> {
        self.keystone
            .as_deref()
            .map(|k| k.files().collect())
            .unwrap_or_default()
    }

    /// Who `credentials` prove the requester to be.
    ///
    /// # Errors
    ///
    /// [`AuthError`] saying what failed.
    pub async fn authenticate(&self, credentials: Credentials<'_>) -> Result<Principal, AuthError> {
        self.prove(credentials).await.map(|proved| proved.principal)
    }

    /// Whether checking `credentials` could be someone's guess paying
    /// off, or cost more than a guesser should get for free: a password
    /// not verified lately (an Argon2 run), or a Keystone token not
    /// validated yet (a call to Keystone). Not a bearer token (256 random
    /// bits: no guess reaches that space), not a client certificate (the
    /// handshake verified it), not credentials already proved right (a
    /// client opening another connection with them does not take turns
    /// behind a guesser on its network).
    pub(crate) fn guessable(&self, credentials: &Credentials<'_>) -> bool {
        match credentials {
            Credentials::None | Credentials::Cert(_) | Credentials::Bearer(_) => false,
            Credentials::Basic { user, password } => self
                .verified
                .get(&self.verified_key(user, password))
                .is_none(),
            Credentials::Keystone(token) => self
                .keystone
                .as_ref()
                .is_none_or(|k| k.cached(token).is_none()),
        }
    }

    /// [`Authenticator::authenticate`], and for how long the connection
    /// that sent `credentials` may take the same ones again unchecked.
    ///
    /// # Errors
    ///
    /// [`AuthError`] saying what failed.
    pub(crate) async fn prove(&self, credentials: Credentials<'_>) -> Result<Proved, AuthError> {
        match credentials {
            Credentials::None => Err(AuthError::Missing),
            Credentials::Basic { user, password } => Ok(Proved {
                principal: self.basic(user, password).await?,
                remember_for: Some(VERIFIED_FOR),
            }),
            Credentials::Bearer(token) => self.bearer(token),
            Credentials::Cert(identity) => Ok(Proved {
                // Checked once per connection by the TLS handshake: nothing
                // to save by remembering.
                principal: self.cert(identity)?,
                remember_for: None,
            }),
            Credentials::Keystone(token) => {
                let keystone = self.keystone.clone().ok_or_else(|| {
                    AuthError::NotAccepted(
                        "Keystone tokens are not accepted: the auth file has no [keystone] section"
                            .to_owned(),
                    )
                })?;
                // A validated token answers from the cache, here: only a
                // call to Keystone goes to a blocking thread.
                let principal = match keystone.cached(token) {
                    Some(principal) => principal,
                    None => {
                        // The turn is held until the call ends, even if the
                        // request's time limit drops this future first.
                        let turn = Arc::clone(&self.keystone_calls)
                            .acquire_owned()
                            .await
                            .map_err(|e| AuthError::KeystoneDown(format!("no turn: {e}")))?;
                        let token = token.to_owned();
                        tokio::task::spawn_blocking(move || {
                            let _turn = turn;
                            keystone.validate(&token)
                        })
                        .await
                        .map_err(|e| AuthError::KeystoneDown(format!("the check failed: {e}")))??
                    }
                };
                // Keystone may revoke a token before its expiry: each
                // request asks the cache, which asks Keystone again once
                // the token expires or `cache_secs` have passed.
                Ok(Proved {
                    principal,
                    remember_for: None,
                })
            }
        }
    }

    /// The key of a verified (user, password) pair: SHA-256 over the
    /// random [`Authenticator::cache_key`], the user's length, the user and
    /// the password (unambiguous whatever bytes they hold).
    fn verified_key(&self, user: &str, password: &str) -> [u8; 32] {
        let mut hasher = Sha256::new();
        hasher.update(self.cache_key);
        hasher.update((user.len() as u64).to_le_bytes());
        hasher.update(user.as_bytes());
        hasher.update(password.as_bytes());
        hasher.finalize().into()
    }

    /// Who `user` and `password` prove the requester to be: from the
    /// verified passwords, or after an Argon2 check on the pool. Only a
    /// request still waiting when its check ends remembers a right
    /// password: a client that hung up (or whose time ran out) learns
    /// nothing from its check, now or by sending it again.
    async fn basic(&self, user: &str, password: &str) -> Result<Principal, AuthError> {
        let key = self.verified_key(user, password);
        if let Some(principal) = self.verified.get(&key) {
            return Ok(principal);
        }
        let found = self.users.get(user);
        // An unknown user's check takes as long as a known one's.
        let hash = found.map_or(&self.decoy, |u| &u.hash);
        let mut verdict = self.check_password(key, hash, password)?;
        // The sender gone without a verdict: the check panicked.
        let right = verdict
            .wait_for(Option::is_some)
            .await
            .is_ok_and(|v| *v == Some(true));
        match found {
            Some(user) if right => {
                self.verified.insert(key, user.principal.clone());
                Ok(user.principal.clone())
            }
            _ => Err(AuthError::WrongPassword),
        }
    }

    /// Where the verdict of `password` against `hash` will be: the check
    /// of the same credentials already under way (a client opening its
    /// connections at once waits for one Argon2 run, not one each), or a
    /// new one on the pool. A check whose requests have all gone by the
    /// time a thread takes it is not run: no one is there to tell (their
    /// charges are kept, `server/http/guard.rs`).
    ///
    /// # Errors
    ///
    /// [`AuthError::Busy`]: the pool's queue is full.
    fn check_password(
        &self,
        key: [u8; 32],
        hash: &str,
        password: &str,
    ) -> Result<watch::Receiver<Option<bool>>, AuthError> {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(check) = running.get(&key) {
            return Ok(check.subscribe());
        }
        let (sender, receiver) = watch::channel(None);
        let sender = Arc::new(sender);
        let job = {
            let sender = Arc::clone(&sender);
            let running = Arc::clone(&self.running);
            let hash = hash.to_owned();
            let password = zeroize::Zeroizing::new(password.to_owned());
            #[cfg(test)]
            let runs = Arc::clone(&self.argon2_runs);
            move || {
                let right = (sender.receiver_count() > 0).then(|| {
                    #[cfg(test)]
                    runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    PasswordHash::new(&hash).is_ok_and(|parsed| {
                        argon2::Argon2::default()
                            .verify_password(password.as_bytes(), &parsed)
                            .is_ok()
                    })
                });
                // Out of the table before the verdict: a request arriving
                // later checks anew (a failure is not kept) or finds the
                // password verified.
                running
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&key);
                if let Some(right) = right {
                    sender.send_replace(Some(right));
                }
            }
        };
        self.pool.run(job).map_err(|_| AuthError::Busy)?;
        running.insert(key, sender);
        Ok(receiver)
    }

    fn bearer(&self, token: &str) -> Result<Proved, AuthError> {
        let found = self
            .tokens
            .get(&sha256(token.as_bytes()))
            .ok_or(AuthError::UnknownToken)?;
        let mut remember_for = VERIFIED_FOR;
        if let Some(expires) = found.expires {
            let left = jiff::Timestamp::now().duration_until(expires);
            match Duration::try_from(left) {
                Ok(left) if !left.is_zero() => remember_for = remember_for.min(left),
                _ => {
                    return Err(AuthError::Expired {
                        name: found.principal.name.trim_start_matches("token:").to_owned(),
                        at: expires.to_string(),
                    });
                }
            }
        }
        Ok(Proved {
            principal: found.principal.clone(),
            remember_for: Some(remember_for),
        })
    }

    fn cert(&self, identity: &CertIdentity) -> Result<Principal, AuthError> {
        self.certs
            .iter()
            .find(|(rule, _)| match (&rule.cn, &rule.san) {
                (Some(cn), _) => identity.cn.as_ref() == Some(cn),
                (None, Some(san)) => identity.dns_names.iter().any(|n| n == san),
                (None, None) => false,
            })
            .map(|(_, principal)| principal.clone())
            .ok_or_else(|| {
                AuthError::UnknownCert(identity.cn.clone().unwrap_or_else(|| {
                    identity
                        .dns_names
                        .first()
                        .cloned()
                        .unwrap_or_else(|| "a subject without a name".to_owned())
                }))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::credentials::new_token;

    #[test]
    fn verified_passwords_are_remembered_under_a_keyed_hash() {
        let (a, _) = authenticator("");
        let (b, _) = authenticator("");
        let key = a.verified_key("ann", "s3cret");
        assert_eq!(key, a.verified_key("ann", "s3cret"));
        // Not the plain digest a guess could be tested against, and not
        // the same in another load.
        assert_ne!(key, sha256(b"ann\0s3cret"));
        assert_ne!(key, b.verified_key("ann", "s3cret"));
        // The user's length is part of it: no two pairs collide by a shift.
        assert_ne!(a.verified_key("an", "ns3cret"), key);
    }

    fn authenticator(extra: &str) -> (Authenticator, String) {
        let (token, digest) = new_token().unwrap();
        let text = format!(
            "[[user]]\nname = \"ann\"\nrole = \"write\"\npassword_hash = \"{}\"\n\
             [[token]]\nname = \"ci\"\nrole = \"read\"\nenvironments = [2]\nsha256 = \"{digest}\"\n{extra}",
            hash_password("s3cret").unwrap()
        );
        (
            Authenticator::new(&AuthFile::parse(&text).unwrap()).unwrap(),
            token,
        )
    }

    #[tokio::test]
    async fn passwords_tokens_and_certificates() {
        let (auth, token) = authenticator(
            "[[client_cert]]\ncn = \"puppet.example\"\nrole = \"read\"\ndecrypt = true\n",
        );
        let ok = |user, password| Credentials::Basic { user, password };
        let ann = auth.authenticate(ok("ann", "s3cret")).await.unwrap();
        assert_eq!((&*ann.name, ann.role), ("ann", Role::Write));
        // Remembered: the second check skips Argon2 and agrees.
        assert_eq!(auth.authenticate(ok("ann", "s3cret")).await.unwrap(), ann);
        for (user, password) in [("ann", "wrong"), ("bob", "s3cret"), ("ann", "")] {
            assert_eq!(
                auth.authenticate(ok(user, password)).await,
                Err(AuthError::WrongPassword)
            );
        }
        let ci = auth
            .authenticate(Credentials::Bearer(&token))
            .await
            .unwrap();
        assert_eq!(
            (&*ci.name, ci.may_use(2), ci.may_use(1)),
            ("token:ci", true, false)
        );
        assert_eq!(
            auth.authenticate(Credentials::Bearer("hierad_nope")).await,
            Err(AuthError::UnknownToken)
        );
        let puppet = CertIdentity {
            cn: Some("puppet.example".to_owned()),
            dns_names: vec![],
        };
        let p = auth.authenticate(Credentials::Cert(&puppet)).await.unwrap();
        assert_eq!(&*p.name, "cert:puppet.example");
        // The auth file's decrypt = true, carried on the principal only.
        assert!(p.decrypt && !ann.decrypt && !ci.decrypt);
        let other = CertIdentity {
            cn: Some("db.example".to_owned()),
            dns_names: vec![],
        };
        assert!(auth.authenticate(Credentials::Cert(&other)).await.is_err());
        assert!(matches!(
            auth.authenticate(Credentials::Keystone("x")).await,
            Err(AuthError::NotAccepted(_))
        ));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_first_checks_of_a_password_run_argon2_once() {
        use std::sync::atomic::Ordering;
        let (auth, _) = authenticator("");
        let auth = Arc::new(auth);
        let check = |password: &'static str| {
            let auth = Arc::clone(&auth);
            tokio::spawn(async move {
                auth.authenticate(Credentials::Basic {
                    user: "ann",
                    password,
                })
                .await
            })
        };
        let right: Vec<_> = (0..16).map(|_| check("s3cret")).collect();
        for task in right {
            assert_eq!(&*task.await.unwrap().unwrap().name, "ann");
        }
        assert_eq!(auth.argon2_runs.load(Ordering::SeqCst), 1);
        // Failures are not kept: each wrong attempt pays its own Argon2
        // (concurrent ones may share one), and none is let in.
        let before = auth.argon2_runs.load(Ordering::SeqCst);
        for _ in 0..2 {
            let wrong = check("guess").await.unwrap();
            assert_eq!(wrong, Err(AuthError::WrongPassword));
        }
        assert_eq!(auth.argon2_runs.load(Ordering::SeqCst), before + 2);
    }

    /// A request that ends before its check (its client hung up) leaves
    /// the check running to its end, and a right password it carried is
    /// not remembered: a replay pays its own check. Before, the orphaned
    /// check cached it, and a replay cut short after a few milliseconds
    /// told a guesser which of its abandoned guesses was right.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_whose_request_is_gone_remembers_nothing() {
        use std::sync::atomic::Ordering;
        let right = Credentials::Basic {
            user: "ann",
            password: "s3cret",
        };
        // The request must end while its check runs: cut too early, the
        // pool's thread finds no one waiting and skips the check; too late,
        // the check is over. Which cut lands in between depends on the
        // machine's load, so cuts of growing length are tried, each on a
        // fresh authenticator, until one does.
        let mut cut_mid_check = None;
        for cut in [1, 2, 5, 10, 20, 40].repeat(3) {
            let (auth, _) = authenticator("");
            let timeout = Duration::from_millis(cut);
            if tokio::time::timeout(timeout, auth.authenticate(right))
                .await
                .is_ok()
            {
                continue; // the check ended within the cut
            }
            // The check runs on, or was skipped (bounded wait: its thread ends it).
            for _ in 0..1000 {
                if auth.running.lock().unwrap().is_empty() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert!(auth.running.lock().unwrap().is_empty());
            if auth.argon2_runs.load(Ordering::SeqCst) == 1 {
                cut_mid_check = Some(auth);
                break;
            }
        }
        let auth = cut_mid_check.expect("no cut ended a request while its check ran");
        assert!(auth.guessable(&right), "not remembered");
        assert_eq!(&*auth.authenticate(right).await.unwrap().name, "ann");
        assert_eq!(auth.argon2_runs.load(Ordering::SeqCst), 2, "checked anew");
        assert!(!auth.guessable(&right), "remembered once a request got it");
    }

    /// Beyond the pool's threads and queue a password is refused
    /// unchecked (503), while a token is answered at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_full_password_queue_refuses_passwords_not_tokens() {
        let (token, digest) = new_token().unwrap();
        let text = format!(
            "[[user]]\nname = \"ann\"\nrole = \"write\"\npassword_hash = \"{}\"\n\
             [[token]]\nname = \"ci\"\nrole = \"read\"\nsha256 = \"{digest}\"\n",
            hash_password("s3cret").unwrap()
        );
        let pool = Arc::new(PasswordPool::new(1, 0));
        let auth =
            Arc::new(Authenticator::with_pool(&AuthFile::parse(&text).unwrap(), pool).unwrap());
        let guesses: Vec<_> = (0..8)
            .map(|i| {
                let auth = Arc::clone(&auth);
                tokio::spawn(async move {
                    let password = format!("guess-{i}");
                    auth.authenticate(Credentials::Basic {
                        user: "ann",
                        password: &password,
                    })
                    .await
                })
            })
            .collect();
        let ci = auth
            .authenticate(Credentials::Bearer(&token))
            .await
            .unwrap();
        assert_eq!(&*ci.name, "token:ci");
        let mut outcomes = Vec::new();
        for guess in guesses {
            outcomes.push(guess.await.unwrap().unwrap_err());
        }
        assert!(outcomes.contains(&AuthError::Busy), "{outcomes:?}");
        assert!(AuthError::Busy.is_unavailable());
    }

    #[tokio::test]
    async fn expired_tokens_are_refused() {
        let (token, digest) = new_token().unwrap();
        let text = format!(
            "[[token]]\nname = \"old\"\nrole = \"admin\"\nexpires_at = \"2020-01-01T00:00:00Z\"\nsha256 = \"{digest}\"\n"
        );
        let auth = Authenticator::new(&AuthFile::parse(&text).unwrap()).unwrap();
        let refused = auth
            .authenticate(Credentials::Bearer(&token))
            .await
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the token \"old\" expired at 2020-01-01T00:00:00Z"
        );
    }
}
