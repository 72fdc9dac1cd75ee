//! Placeholder until the render branch lands (replaced wholesale by it).
use crate::hiera::Value;
pub fn cli_output(v: &Value) -> String {
    format!("{}\n", super::ruby::inspect(v))
}
