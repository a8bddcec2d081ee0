//! Our MCP wire layer: JSON-RPC 2.0 over `serde_json::Value`, not typed structs, so a
//! proxy can forward fields it does not know (`outputSchema`, `annotations`, `icons`,
//! vendor fields) unchanged and can send deliberately non-conforming or older replies.
//! Client halves for stdio and Streamable HTTP upstreams; the server half lives in the
//! gateway.

mod client;
mod http;
pub mod jsonrpc;
pub mod protocol;
pub mod sse;
mod stdio;

pub use client::{CallError, Endpoint, McpClient, RequestError, ServerIdentity};
pub use jsonrpc::{Message, RpcError};
