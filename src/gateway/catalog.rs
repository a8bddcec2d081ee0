//! The flattened tool namespace of a session: the scenario's fixture tools and every
//! upstream server's tools in one list, each with its provenance. A fixture shadows an
//! upstream tool of the same name; two upstream tools of one name are both exposed as
//! `server:tool`. A malformed upstream tool (no name, no inputSchema) is left out and
//! reported by name — it never fails the whole list.

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::{Value, json};

use super::upstream::Upstreams;
use crate::scenario::FixtureTool;

/// Where a tool comes from.
#[derive(Clone)]
pub enum Source {
    /// A scenario fixture, and its input schema compiled (None if it does not compile).
    Fixture(FixtureTool, Option<Arc<jsonschema::Validator>>),
    /// An upstream server's tool: the server's index and the tool's own name there.
    Upstream {
        /// Index into [`Upstreams::servers`].
        server: usize,
        /// The name the upstream knows it by.
        name: String,
    },
}

/// One exposed tool.
#[derive(Clone)]
pub struct Entry {
    /// `fixture` or `SERVER:TOOL`.
    pub provenance: String,
    /// The descriptor as exposed: the upstream's own, every field kept, with `name`
    /// set to the exposed name.
    pub descriptor: Value,
    /// Where calls go.
    pub source: Source,
}

/// A session's tools by exposed name, and the problems met building it.
#[derive(Clone, Default)]
pub struct Catalog {
    /// Tools by exposed name, fixtures first, then upstreams in order.
    pub tools: IndexMap<String, Entry>,
    /// Shadowed, renamed or malformed tools, and unreachable servers.
    pub problems: Vec<String>,
}

impl Catalog {
    /// Builds the namespace from fixtures and the upstreams' current tool lists.
    pub fn build(fixtures: &IndexMap<String, FixtureTool>, upstreams: &Upstreams) -> Catalog {
        let mut cat = Catalog::default();
        for (name, tool) in fixtures {
            cat.tools.insert(
                name.clone(),
                Entry {
                    provenance: "fixture".into(),
                    descriptor: json!({"name": name, "description": tool.description, "inputSchema": tool.input_schema}),
                    source: Source::Fixture(tool.clone(), jsonschema::validator_for(&tool.input_schema).ok().map(Arc::new)),
                },
            );
        }
        // Upstream tools, valid ones only, with how often each name occurs.
        let mut upstream: Vec<(usize, String, Value)> = Vec::new();
        for (i, server) in upstreams.servers().iter().enumerate() {
            if let Some(e) = &server.error {
                cat.problems
                    .push(format!("server `{}` is unavailable: {e}", server.name));
            }
            for (j, tool) in server.tools().into_iter().enumerate() {
                match tool.get("name").and_then(Value::as_str) {
                    None => cat.problems.push(format!(
                        "server `{}`: tool #{j} has no name; left out",
                        server.name
                    )),
                    Some(name) if !tool.get("inputSchema").is_some_and(Value::is_object) => {
                        cat.problems.push(format!(
                            "server `{}`: tool `{name}` has no inputSchema object; left out",
                            server.name
                        ))
                    }
                    Some(name) => upstream.push((i, name.to_string(), tool.clone())),
                }
            }
        }
        for (i, name, mut descriptor) in upstream.iter().cloned() {
            let server = &upstreams.servers()[i].name;
            let provenance = format!("{server}:{name}");
            if fixtures.contains_key(&name) {
                cat.problems
                    .push(format!("fixture `{name}` shadows `{provenance}`"));
                continue;
            }
            let clashes = upstream.iter().filter(|(_, n, _)| *n == name).count() > 1;
            let exposed = if clashes {
                cat.problems.push(format!(
                    "`{name}` is offered by several servers: exposed as `{provenance}`"
                ));
                provenance.clone()
            } else {
                name.clone()
            };
            descriptor["name"] = Value::String(exposed.clone());
            cat.tools.insert(
                exposed,
                Entry {
                    provenance,
                    descriptor,
                    source: Source::Upstream { server: i, name },
                },
            );
        }
        cat
    }
}
