//! How the `hiera` command prints an answer: Ruby (`puts`/`pp`), JSON
//! (`JSON.dump`) and YAML (`to_yaml`), byte for byte.
pub mod json;
pub mod ruby;
pub mod yaml;
