//! MCP protocol versions and the two eras: the `initialize` handshake (2024-11-05 to
//! 2025-11-25) and the stateless revision (2026-07-28), where every request carries its
//! version and client capabilities in `_meta` and `server/discover` replaces the handshake.

use serde_json::{Value, json};

/// The stateless revision.
pub const STATELESS: &str = "2026-07-28";
/// Versions of the handshake era, newest first.
pub const LEGACY: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The newest handshake-era version.
pub const LATEST_LEGACY: &str = LEGACY[0];
/// Every version we speak, newest first.
pub const SUPPORTED: [&str; 5] = [
    STATELESS,
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// `_meta` key of the protocol version on each stateless request.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities on each stateless request.
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client info.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The HTTP header carrying the protocol version.
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// The HTTP header carrying the session id (handshake era).
pub const SESSION_HEADER: &str = "mcp-session-id";

/// Which era a connection speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Era {
    /// `initialize` was done with this version.
    Legacy(String),
    /// Stateless: `_meta` on each request.
    Stateless,
}

impl Era {
    /// The version string.
    pub fn version(&self) -> &str {
        match self {
            Era::Legacy(v) => v,
            Era::Stateless => STATELESS,
        }
    }
}

/// Our client info.
pub fn client_info() -> Value {
    json!({"name": "fibon-verify", "version": env!("CARGO_PKG_VERSION")})
}

/// Adds the stateless `_meta` to request params (keeping any `_meta` already there).
pub fn with_stateless_meta(mut params: Value) -> Value {
    if !params.is_object() {
        params = json!({});
    }
    let meta = params
        .as_object_mut()
        .expect("an object")
        .entry("_meta")
        .or_insert_with(|| json!({}));
    if let Some(m) = meta.as_object_mut() {
        m.insert(META_VERSION.into(), STATELESS.into());
        m.entry(META_CAPABILITIES).or_insert_with(|| json!({}));
        m.entry(META_CLIENT_INFO).or_insert_with(client_info);
    }
    params
}

/// The version a stateless request names in its `_meta`, if any.
pub fn request_version(params: &Value) -> Option<&str> {
    params.get("_meta")?.get(META_VERSION)?.as_str()
}

/// The version a server answers to `initialize` with `requested`: the same if we speak
/// it, else our newest handshake-era version (the client then decides).
pub fn negotiate(requested: &str) -> &'static str {
    LEGACY
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LATEST_LEGACY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_and_meta() {
        assert_eq!(negotiate("2025-03-26"), "2025-03-26");
        assert_eq!(negotiate("1999-01-01"), LATEST_LEGACY);
        let p = with_stateless_meta(json!({"name": "echo", "_meta": {"progressToken": 1}}));
        assert_eq!(request_version(&p), Some(STATELESS));
        assert_eq!(p["_meta"]["progressToken"], 1);
        assert_eq!(p["name"], "echo");
    }
}
