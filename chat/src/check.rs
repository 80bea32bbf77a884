//! Compile-time checks jinja2 makes and minijinja does not.

use crate::error::ChatError;

/// Checks a (rewritten) template source.
pub(crate) fn check(_source: &str) -> Result<(), ChatError> {
    Ok(())
}
