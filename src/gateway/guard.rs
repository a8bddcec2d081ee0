//! The DNS-rebinding defence in front of every route: a request whose `Host` does not
//! name the address the gateway is bound to, or whose `Origin` is not loopback (or the
//! bound address), is refused with 403 before any route sees it — as the MCP
//! specification requires of local servers. A web page an agent's browser opens cannot
//! then reach the gateway through a host name of its own that resolves to 127.0.0.1.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::mcp::jsonrpc::{self, RpcError};

/// Refuses a request whose `Host` or `Origin` is not allowed ([`host_allowed`],
/// [`origin_allowed`]); serves it otherwise.
pub(super) async fn same_host(
    State(bound): State<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    match refusal(bound, request.headers()) {
        Some((code, message)) => forbidden(request.uri().path(), code, &message),
        None => next.run(request).await,
    }
}

/// Why a request with these headers is refused, if it is.
fn refusal(bound: SocketAddr, headers: &HeaderMap) -> Option<(&'static str, String)> {
    let host = headers.get(header::HOST).map(|h| h.as_bytes());
    match host.and_then(|h| std::str::from_utf8(h).ok()) {
        Some(h) if host_allowed(bound, h) => {}
        Some(h) => {
            return Some((
                "INVALID_HOST",
                format!("Host `{h}` is not this gateway's address ({bound})"),
            ));
        }
        None => return Some(("INVALID_HOST", "the request has no Host header".into())),
    }
    let origin = headers.get(header::ORIGIN)?;
    let origin = String::from_utf8_lossy(origin.as_bytes());
    (!origin_allowed(bound, &origin)).then(|| {
        (
            "INVALID_ORIGIN",
            format!("Origin `{origin}` is not a loopback origin"),
        )
    })
}

/// Whether `Host` names the bound address: its port (or none, on port 80) and the bound
/// IP address itself, or `localhost` on a loopback bind. A bind to every interface
/// (`0.0.0.0`, `::`) takes any IP address. No other host name is ever taken: a DNS
/// rebinding attack needs one.
pub(super) fn host_allowed(bound: SocketAddr, host: &str) -> bool {
    let Some((name, port)) = split_host(host) else {
        return false;
    };
    if port.map_or(bound.port() != 80, |p| p != bound.port()) {
        return false;
    }
    let ip = bound.ip();
    if name.eq_ignore_ascii_case("localhost") {
        return ip.is_loopback() || ip.is_unspecified();
    }
    match name.parse::<IpAddr>() {
        Ok(named) => ip.is_unspecified() || named == ip,
        Err(_) => false,
    }
}

/// Whether an `Origin` is one a page on this machine has: `http` or `https`, any port,
/// from `localhost`, a loopback address or the bound address. `null` (a sandboxed or
/// file page) is not.
pub(super) fn origin_allowed(bound: SocketAddr, origin: &str) -> bool {
    let Ok(url) = url::Url::parse(origin) else {
        return false;
    };
    if !matches!(url.scheme(), "http" | "https") {
        return false;
    }
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback() || IpAddr::V4(a) == bound.ip(),
        Some(url::Host::Ipv6(a)) => a.is_loopback() || IpAddr::V6(a) == bound.ip(),
        None => false,
    }
}

/// `NAME[:PORT]` or `[V6][:PORT]`: the name (without brackets) and the port.
fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        match after {
            "" => (v6, None),
            _ => (v6, Some(after.strip_prefix(':')?)),
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    if name.is_empty() {
        return None;
    }
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok()?),
        None => None,
    };
    Some((name, port))
}

/// 403, in the shape of the route refused: a JSON-RPC error on the MCP endpoint, the
/// REST API's error body elsewhere.
fn forbidden(path: &str, code: &str, message: &str) -> Response {
    let body = if path.ends_with("/mcp") {
        jsonrpc::error_response(
            serde_json::Value::Null,
            &RpcError::new(-32000, format!("Forbidden: {message}")),
        )
    } else {
        json!({"error": {"code": code, "message": message}})
    };
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(addr: &str) -> SocketAddr {
        addr.parse().unwrap()
    }

    #[test]
    fn the_host_must_name_the_bound_address() {
        let v4 = at("127.0.0.1:4100");
        for ok in ["127.0.0.1:4100", "localhost:4100", "LOCALHOST:4100"] {
            assert!(host_allowed(v4, ok), "{ok}");
        }
        for bad in [
            "evil.com:4100",
            "evil.com",
            "127.0.0.1:4101",
            "127.0.0.1",
            "127.0.0.2:4100",
            "[::1]:4100",
            "localhost.evil.com:4100",
            ":4100",
            "127.0.0.1:x",
            "",
        ] {
            assert!(!host_allowed(v4, bad), "{bad}");
        }
        let v6 = at("[::1]:4100");
        assert!(host_allowed(v6, "[::1]:4100"));
        assert!(host_allowed(v6, "localhost:4100"));
        assert!(!host_allowed(v6, "127.0.0.1:4100"));
        assert!(!host_allowed(v6, "[::1"));
        let any = at("0.0.0.0:4100");
        assert!(host_allowed(any, "192.168.1.5:4100"));
        assert!(host_allowed(any, "0.0.0.0:4100"));
        assert!(host_allowed(any, "localhost:4100"));
        assert!(
            !host_allowed(any, "myhost.lan:4100"),
            "a name can be rebound"
        );
        let lan = at("10.1.2.3:4100");
        assert!(host_allowed(lan, "10.1.2.3:4100"));
        assert!(!host_allowed(lan, "localhost:4100"));
        assert!(!host_allowed(lan, "10.1.2.4:4100"));
        assert!(host_allowed(at("127.0.0.1:80"), "localhost"));
    }

    #[test]
    fn the_origin_must_be_loopback() {
        let v4 = at("127.0.0.1:4100");
        for ok in [
            "http://localhost:6274",
            "http://127.0.0.1:4100",
            "https://127.8.9.1",
            "http://[::1]:3000",
        ] {
            assert!(origin_allowed(v4, ok), "{ok}");
        }
        for bad in [
            "http://evil.com",
            "null",
            "file://",
            "http://localhost.evil.com",
            "chrome-extension://abc",
            "http://10.1.2.3",
        ] {
            assert!(!origin_allowed(v4, bad), "{bad}");
        }
        assert!(origin_allowed(at("10.1.2.3:4100"), "http://10.1.2.3:8080"));
    }
}
