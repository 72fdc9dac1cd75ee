//! Keystone v3 tokens (`X-Auth-Token`), validated the way OpenStack
//! services do: `GET /v3/auth/tokens` with the token in `X-Subject-Token`
//! and the server's own service token in `X-Auth-Token`, the service token
//! obtained with the service account's password (`POST /v3/auth/tokens`).
//! A validated token is remembered until its `expires_at`, at most
//! `cache_secs` (a revocation is seen then), in a bounded cache; Keystone unreachable or failing is `KeystoneDown` (503), never
//! a pass. Blocking calls: the server runs them off its async workers.
//! Calls that need the same answer share one call (moka's
//! `try_get_with`): requests with the same new token wait for one
//! validation, and every validation for one service login, so a hung
//! Keystone holds each request one call's timeout, not one per request
//! queued before it.

use super::file::KeystoneEntry;
use super::verify::{AuthError, sha256};
use super::{Principal, Role, Via};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The largest answer read from Keystone (a token's JSON with its
/// catalog is some kilobytes).
const ANSWER_LIMIT: u64 = 1 << 20;

/// How long a login Keystone refused (4xx: wrong password, unknown
/// user or project) is answered from memory before Keystone is asked
/// again. Keystone may lock an account after a few failed logins
/// (`lockout_failure_attempts`); every request with a new token would
/// otherwise be one. A reload of the auth file tries at once.
const LOGIN_RETRY: Duration = Duration::from_secs(30);

/// A Keystone answer names a token's expiry; entries live until then.
struct UntilExpiry;

impl<K, V> moka::Expiry<K, (V, jiff::Timestamp)> for UntilExpiry {
    fn expire_after_create(
        &self,
        _key: &K,
        value: &(V, jiff::Timestamp),
        _now: std::time::Instant,
    ) -> Option<Duration> {
        let left = value.1.duration_since(jiff::Timestamp::now());
        Some(Duration::try_from(left).unwrap_or(Duration::ZERO))
    }
}

/// A configured Keystone.
pub(crate) struct Keystone {
    tokens_url: String,
    config: KeystoneEntry,
    password: String,
    agent: ureq::Agent,
    /// The service token, until a minute before its expiry.
    service: moka::sync::Cache<(), (Arc<str>, jiff::Timestamp)>,
    /// The last login Keystone refused, and when (see [`LOGIN_RETRY`]).
    refused: Mutex<Option<(Instant, AuthError)>>,
    validated: moka::sync::Cache<[u8; 32], (Principal, jiff::Timestamp)>,
}

#[derive(serde::Deserialize)]
struct TokenBody {
    token: TokenInfo,
}

#[derive(serde::Deserialize)]
struct TokenInfo {
    expires_at: String,
    user: Option<UserInfo>,
    #[serde(default)]
    roles: Vec<Named>,
    /// The project the token is scoped to (absent: unscoped or domain-scoped).
    project: Option<Named>,
}

#[derive(serde::Deserialize)]
struct UserInfo {
    name: String,
    domain: Option<Named>,
}

#[derive(serde::Deserialize)]
struct Named {
    name: String,
}

impl Keystone {
    /// Ready to validate tokens with `config` (its password file read now).
    ///
    /// # Errors
    ///
    /// The password file cannot be read.
    pub(crate) fn new(config: &KeystoneEntry) -> Result<Keystone, String> {
        let password = crate::config_file::read_to_string(&config.password_file).map_err(|e| {
            format!(
                "cannot read keystone.password_file {}: {e}",
                config.password_file.display()
            )
        })?;
        let mut agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(config.timeout_secs.max(1))));
        if let Some(path) = &config.ca_file {
            agent = agent.tls_config(trusting(path)?);
        }
        let agent = agent.build().into();
        Ok(Keystone {
            tokens_url: format!("{}/auth/tokens", config.url.trim_end_matches('/')),
            config: config.clone(),
            password: password.trim_end_matches(['\r', '\n']).to_owned(),
            agent,
            service: moka::sync::Cache::builder()
                .max_capacity(1)
                .expire_after(UntilExpiry)
                .build(),
            refused: Mutex::new(None),
            validated: moka::sync::Cache::builder()
                .max_capacity(config.cache_entries)
                .expire_after(UntilExpiry)
                .build(),
        })
    }

    pub(crate) fn url(&self) -> &str {
        &self.config.url
    }

    /// The file the service account's password was read from.
    pub(crate) fn password_file(&self) -> &std::path::Path {
        &self.config.password_file
    }

    /// The files it was made from: the service account's password, and
    /// the CA file if any (a reload watches them).
    pub(crate) fn files(&self) -> impl Iterator<Item = &std::path::Path> {
        std::iter::once(self.config.password_file.as_path()).chain(self.config.ca_file.as_deref())
    }

    /// How long one validation may take: a login and a validation, twice
    /// when Keystone refuses the service token ([`Keystone::ask`]), each
    /// within `timeout_secs`.
    pub(crate) fn longest_validation(&self) -> Duration {
        Duration::from_secs(self.config.timeout_secs.max(1)).saturating_mul(4)
    }

    /// Who `token` belongs to, with the highest hierad role its Keystone
    /// roles map to.
    ///
    /// # Errors
    ///
    /// `KeystoneRefused` for a token Keystone does not know or that maps
    /// to no role; `KeystoneDown` when Keystone cannot answer.
    pub(crate) fn validate(&self, token: &str) -> Result<Principal, AuthError> {
        if let Some(principal) = self.cached(token) {
            return Ok(principal);
        }
        // Requests with the same token that miss the cache together wait
        // for one validation. A refusal is not cached: the next request
        // asks again.
        self.validated
            .try_get_with(sha256(token.as_bytes()), || self.ask(token))
            .map(|(principal, _)| principal)
            .map_err(|e| (*e).clone())
    }

    /// Keystone's validation of `token`: who it is, and until when that
    /// may be remembered.
    fn ask(&self, token: &str) -> Result<(Principal, jiff::Timestamp), AuthError> {
        let (mut status, mut body, service) = self.check(token, None)?;
        if status == 401 {
            // Our service token may have been revoked: once more, anew.
            (status, body, _) = self.check(token, Some(&service))?;
        }
        match status {
            200 => {}
            404 => {
                return Err(AuthError::KeystoneRefused(
                    "unknown or expired token".to_owned(),
                ));
            }
            401 | 403 => {
                return Err(AuthError::KeystoneDown(format!(
                    "Keystone answered {status} to the service account {:?}: check its roles",
                    self.config.user
                )));
            }
            other => {
                return Err(AuthError::KeystoneDown(format!(
                    "Keystone answered HTTP {other} to a token validation"
                )));
            }
        }
        let parsed: TokenBody = serde_json::from_str(&body)
            .map_err(|e| AuthError::KeystoneDown(format!("unreadable validation answer: {e}")))?;
        let (principal, expires) = self.principal(parsed.token)?;
        // Keystone may revoke the token before it expires: asked again
        // after `cache_secs` at the latest.
        let asked_again = jiff::Timestamp::now()
            .checked_add(jiff::SignedDuration::from_secs(
                i64::try_from(self.config.cache_secs).unwrap_or(i64::MAX),
            ))
            .unwrap_or(expires);
        Ok((principal, expires.min(asked_again)))
    }

    /// Who `token` belongs to, if Keystone validated it within
    /// `cache_secs` and it has not expired since: no call to Keystone, so
    /// the server asks on its async workers.
    pub(crate) fn cached(&self, token: &str) -> Option<Principal> {
        let (principal, expires) = self.validated.get(&sha256(token.as_bytes()))?;
        (jiff::Timestamp::now() < expires).then_some(principal)
    }

    fn principal(&self, token: TokenInfo) -> Result<(Principal, jiff::Timestamp), AuthError> {
        let expires: jiff::Timestamp = token
            .expires_at
            .parse()
            .map_err(|e| AuthError::KeystoneDown(format!("unreadable expires_at: {e}")))?;
        if expires <= jiff::Timestamp::now() {
            return Err(AuthError::KeystoneRefused(
                "the token has expired".to_owned(),
            ));
        }
        let name = token.user.map_or_else(
            || "keystone:?".to_owned(),
            |u| match u.domain {
                Some(d) => format!("keystone:{}@{}", u.name, d.name),
                None => format!("keystone:{}", u.name),
            },
        );
        let role = best_role(
            &self.config.roles,
            token.roles.iter().map(|r| r.name.as_str()),
        )
        .ok_or_else(|| {
            AuthError::KeystoneRefused(format!(
                "{name} has none of the Keystone roles keystone.roles maps"
            ))
        })?;
        let environments = match &self.config.projects {
            None => None,
            Some(projects) => {
                let project = token.project.as_ref().map(|p| p.name.as_str());
                let Some(envs) = project.and_then(|p| projects.get(p)) else {
                    let scope =
                        project.map_or("no project".to_owned(), |p| format!("project {p:?}"));
                    return Err(AuthError::KeystoneRefused(format!(
                        "{name}'s token is scoped to {scope}, which keystone.projects does not list"
                    )));
                };
                Some(Arc::from(envs.as_slice()))
            }
        };
        let principal = Principal {
            name: Arc::from(name),
            role,
            environments,
            via: Via::Keystone,
            decrypt: self.config.decrypt,
        };
        Ok((principal, expires))
    }

    /// One `GET /v3/auth/tokens`: its status, its body and the service
    /// token it was sent with (`stale`: a service token Keystone refused,
    /// not to be sent again).
    fn check(
        &self,
        token: &str,
        stale: Option<&str>,
    ) -> Result<(u16, String, Arc<str>), AuthError> {
        let service = self.service_token(stale)?;
        let mut response = self
            .agent
            .get(&self.tokens_url)
            .header("X-Auth-Token", &*service)
            .header("X-Subject-Token", token)
            .call()
            .map_err(|e| self.down(&e))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(ANSWER_LIMIT)
            .read_to_string()
            .map_err(|e| self.down(&e))?;
        Ok((status, body, service))
    }

    /// Why a call to Keystone got no usable answer, in the operator's
    /// terms.
    fn down(&self, e: &ureq::Error) -> AuthError {
        let url = &self.config.url;
        AuthError::KeystoneDown(match e {
            ureq::Error::Timeout(_) => format!(
                "Keystone at {url} did not answer within keystone.timeout_secs ({} s)",
                self.config.timeout_secs.max(1)
            ),
            ureq::Error::BodyExceedsLimit(_) => {
                format!("Keystone at {url} sent an answer over {ANSWER_LIMIT} bytes")
            }
            other => format!("cannot reach Keystone at {url}: {other}"),
        })
    }

    /// The service token, obtained anew when missing, within a minute of
    /// its expiry, or `stale` (refused by Keystone). Callers that find it
    /// missing together wait for one login, and share its failure.
    fn service_token(&self, stale: Option<&str>) -> Result<Arc<str>, AuthError> {
        use moka::ops::compute::Op;
        if let Some(stale) = stale {
            // Unless another call has already replaced it.
            self.service.entry(()).and_compute_with(|held| match held {
                Some(held) if &*held.value().0 == stale => Op::Remove,
                _ => Op::Nop,
            });
        }
        let refused = self.refused.lock().map_or(None, |held| {
            held.as_ref()
                .filter(|(at, _)| at.elapsed() < LOGIN_RETRY)
                .map(|(_, e)| e.clone())
        });
        if let Some(refused) = refused {
            return Err(refused);
        }
        self.service
            .try_get_with((), || self.log_in())
            .map(|(token, _)| token)
            .map_err(|e| (*e).clone())
    }

    /// A new service token (`POST /v3/auth/tokens`), and a minute before
    /// its expiry.
    fn log_in(&self) -> Result<(Arc<str>, jiff::Timestamp), AuthError> {
        let c = &self.config;
        let body = serde_json::json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": c.user, "domain": {"name": c.user_domain}, "password": self.password}}},
            "scope": {"project": {"name": c.project, "domain": {"name": c.project_domain}}}
        }});
        let mut response = self
            .agent
            .post(&self.tokens_url)
            .send_json(&body)
            .map_err(|e| self.down(&e))?;
        let status = response.status().as_u16();
        if (400..500).contains(&status) {
            let refused = AuthError::KeystoneDown(format!(
                "Keystone refused the service account {:?} (HTTP {status}): check keystone.user, password_file and project \
                 (asked again {} s after, or at once on a reload)",
                c.user,
                LOGIN_RETRY.as_secs()
            ));
            if let Ok(mut held) = self.refused.lock() {
                *held = Some((Instant::now(), refused.clone()));
            }
            return Err(refused);
        }
        if status != 201 {
            return Err(AuthError::KeystoneDown(format!(
                "Keystone answered HTTP {status} to the service account's login"
            )));
        }
        let token = response
            .headers()
            .get("X-Subject-Token")
            .and_then(|v| v.to_str().ok())
            .map(Arc::<str>::from)
            .ok_or_else(|| {
                AuthError::KeystoneDown("Keystone sent no X-Subject-Token".to_owned())
            })?;
        let body = response
            .body_mut()
            .with_config()
            .limit(ANSWER_LIMIT)
            .read_to_string()
            .map_err(|e| self.down(&e))?;
        let info: TokenBody = serde_json::from_str(&body)
            .map_err(|e| AuthError::KeystoneDown(format!("unreadable token answer: {e}")))?;
        let expires: jiff::Timestamp = info
            .token
            .expires_at
            .parse()
            .map_err(|e| AuthError::KeystoneDown(format!("unreadable expires_at: {e}")))?;
        let renew_at = expires
            .checked_sub(jiff::SignedDuration::from_secs(60))
            .unwrap_or(expires);
        Ok((token, renew_at))
    }
}

/// TLS that trusts the CA certificates of `keystone.ca_file` (and no
/// other).
fn trusting(path: &std::path::Path) -> Result<ureq::tls::TlsConfig, String> {
    use ureq::tls::{Certificate, RootCerts, TlsConfig};
    let shown = path.display();
    let pem = crate::config_file::read(path)
        .map_err(|e| format!("cannot read keystone.ca_file {shown}: {e}"))?;
    let roots = crate::config_file::certificates(&pem)
        .map_err(|e| format!("keystone.ca_file {shown}: {e}"))?
        .iter()
        .map(|c| Certificate::from_der(c.as_ref()).to_owned())
        .collect();
    Ok(TlsConfig::builder()
        .root_certs(RootCerts::Specific(Arc::new(roots)))
        .build())
}

/// The highest hierad role that `names` map to.
fn best_role<'a>(
    map: &BTreeMap<String, Role>,
    names: impl Iterator<Item = &'a str>,
) -> Option<Role> {
    names.filter_map(|n| map.get(n).copied()).max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_mapped_role_wins() {
        let map: BTreeMap<String, Role> = [
            ("reader".to_owned(), Role::Read),
            ("member".to_owned(), Role::Write),
        ]
        .into();
        assert_eq!(
            best_role(&map, ["reader", "member", "x"].into_iter()),
            Some(Role::Write)
        );
        assert_eq!(best_role(&map, ["x"].into_iter()), None);
    }

    /// The answer to `GET /v3/auth/tokens` as the Identity API v3
    /// reference shows it ("Validate and show information for token"),
    /// catalog shortened: `expires_at` with microseconds, fields hierad
    /// does not read.
    const REFERENCE_ANSWER: &str = r#"{"token": {
        "audit_ids": ["mAjXQhiYRyKwkB4qygdLVg"],
        "catalog": [{"endpoints": [{"id": "068d1b359ee84b438266cb736d81de97", "interface": "public",
            "region": "RegionOne", "region_id": "RegionOne", "url": "http://example.com/identity"}],
            "id": "050726f278654128aba89757ae25910c", "name": "keystone", "type": "identity"}],
        "expires_at": "2015-11-05T22:00:11.000000Z",
        "is_domain": false,
        "issued_at": "2015-11-05T21:00:33.819948Z",
        "methods": ["password"],
        "project": {"domain": {"id": "default", "name": "Default"},
            "id": "8538a3f13f9541b28c2620eb19065e45", "name": "admin"},
        "roles": [{"id": "c703057be878458588961ce9a0ce686b", "name": "admin"}],
        "user": {"domain": {"id": "default", "name": "Default"},
            "id": "10a2e6e717a245d9acad3e5f97aeca3d", "name": "admin", "password_expires_at": null}
    }}"#;

    #[test]
    fn the_reference_answer_maps_to_a_principal_and_its_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let password = dir.path().join("pw");
        std::fs::write(&password, "pw\n").unwrap();
        let text = format!(
            "[keystone]\nurl = \"http://127.0.0.1:9/v3\"\nuser = \"hierad\"\npassword_file = {:?}\n\
             project = \"service\"\n[keystone.roles]\nadmin = \"admin\"\nmember = \"write\"\n\
             [keystone.projects]\nadmin = [1, 3]\n",
            password.display().to_string()
        );
        let file = super::super::AuthFile::parse(&text).unwrap();
        let keystone = Keystone::new(file.keystone.as_ref().unwrap()).unwrap();
        let answer = |text: &str| serde_json::from_str::<TokenBody>(text).unwrap().token;
        // As published, it expired in 2015.
        assert_eq!(
            keystone.principal(answer(REFERENCE_ANSWER)),
            Err(AuthError::KeystoneRefused(
                "the token has expired".to_owned()
            ))
        );
        let later = REFERENCE_ANSWER.replace("2015-11-05T22:00:11", "2099-11-05T22:00:11");
        let (principal, expires) = keystone.principal(answer(&later)).unwrap();
        assert_eq!(&*principal.name, "keystone:admin@Default");
        assert_eq!(principal.role, Role::Admin);
        assert_eq!(principal.environments.as_deref(), Some(&[1, 3][..]));
        assert_eq!(expires.to_string(), "2099-11-05T22:00:11Z");
    }
}
