//! Test commands (issue 43): `configureFailPoint`, only with `--setParameter
//! enableTestCommands=1` (otherwise 59, as on mongod); the fail point itself is
//! `crate::failpoint`.

use super::Request;
use crate::engine::Engine;
use crate::error::Error;
use bson::{Document, doc};

/// Commands that exist only with test commands enabled.
pub(super) const NAMES: &[&str] = &["configureFailPoint"];

/// `configureFailPoint: "failCommand", mode, data`: `{count}`, how often the point acted
/// before.
pub(super) fn configure_fail_point(
    engine: &Engine,
    request: &Request<'_>,
) -> Result<Document, Error> {
    let count = engine.fail_points.configure(request.body)?;
    Ok(doc! { "count": count })
}
