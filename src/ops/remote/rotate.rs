//! The client of `POST /api/v1/secrets/rotate` (`hierad secrets rotate
//! --server URL`).

use super::{Method, Remote, Result};
use crate::api::paths;
use crate::ops::rotate::Rotated;

impl Remote {
    /// `POST /api/v1/secrets/rotate[?env=N]`: the server re-encrypts with
    /// its own keys.
    ///
    /// # Errors
    ///
    /// API and transport errors; nothing is written on any of them.
    pub(crate) fn rotate_secrets(&self, env: Option<i64>) -> Result<Rotated> {
        let query = env.map_or(String::new(), |env| format!("?env={env}"));
        let text = self.call(
            Method::Post,
            &format!("{}{query}", paths::SECRETS_ROTATE),
            None,
        )?;
        serde_json::from_str(&text).map_err(|e| super::RemoteError::BadAnswer {
            url: format!("{}{}", self.base, paths::SECRETS_ROTATE),
            status: 200,
            reason: e.to_string(),
        })
    }
}
