//! Placeholder until the yaml branch lands (replaced wholesale by it).
use super::error::{ErrorClass, HieraError, Result};
use super::value::Value;
pub fn load(_text: &str) -> Result<Value> {
    Err(HieraError::new(
        ErrorClass::PsychSyntaxError,
        "yaml loader not merged yet",
    ))
}
