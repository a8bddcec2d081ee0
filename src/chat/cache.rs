//! The judge cache (`--cache DIR`, `--no-cache`, `fibon-verify cache clear`): one file per
//! model judgement, named by a SHA-256 of the endpoint and its model, the full request
//! and the policy version, holding the validated answer. A file that cannot be read or does not
//! hold a valid entry is a named miss (asked again and rewritten), never a crash or a
//! silent wrong answer; every write is a temporary file renamed into place.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The format of an entry.
pub const FORMAT: &str = "fibon.judge-cache/v1";

/// The folder `--cache` defaults to.
pub const DEFAULT_DIR: &str = "target/fibon/cache";

/// Where judgements are kept, or nowhere (`--no-cache`).
#[derive(Debug, Clone, Default)]
pub struct Cache {
    dir: Option<PathBuf>,
}

/// What a lookup found.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// The cache is off.
    Off,
    /// No entry.
    Miss,
    /// An entry's answer (still to be validated by the caller).
    Hit(Value),
    /// An entry that cannot be used, and why.
    Corrupt(String),
}

/// How a judgement used the cache, as recorded in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheUse {
    /// `hit` (served from the cache, no model call), `miss` (asked, then stored) or
    /// `corrupt` (an unusable entry: asked again and rewritten).
    pub status: String,
    /// The entry's key (its file is `KEY.json` in the cache folder).
    pub key: String,
    /// Why an entry was corrupt, or why storing the answer failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Cache {
    /// No cache.
    pub fn off() -> Cache {
        Cache { dir: None }
    }

    /// A cache in `dir` (created on the first write).
    pub fn at(dir: impl Into<PathBuf>) -> Cache {
        Cache {
            dir: Some(dir.into()),
        }
    }

    /// The folder, when on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The key of a request: SHA-256 over the endpoint (its base URL), the model, the
    /// request as sent and the policy version, in hex. Any change to the prompt,
    /// candidate, rubric, schema, model or endpoint changes it.
    pub fn key(endpoint: &str, model: &str, request: &Value, version: &str) -> String {
        let material = json!({
            "endpoint": endpoint, "model": model, "request": request, "policy_version": version,
        });
        let digest = Sha256::digest(material.to_string().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{key}.json")))
    }

    /// The entry under `key`.
    pub fn get(&self, key: &str) -> Lookup {
        let Some(path) = self.path(key) else {
            return Lookup::Off;
        };
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return Lookup::Corrupt(format!("{} cannot be read: {e}", path.display())),
        };
        let corrupt = |why: &str| Lookup::Corrupt(format!("{} {why}", path.display()));
        let Ok(entry) = serde_json::from_slice::<Value>(&bytes) else {
            return corrupt("is not JSON");
        };
        if entry["format"] != FORMAT {
            return corrupt(&format!("is not a {FORMAT} entry"));
        }
        if entry["key"] != key {
            return corrupt("holds another key's entry");
        }
        match entry.get("answer") {
            Some(a) if a.is_object() => Lookup::Hit(a.clone()),
            _ => corrupt("has no answer"),
        }
    }

    /// Stores a validated answer under `key`, atomically (a temporary file beside it,
    /// renamed over it). Secrets are redacted as in every file written.
    pub fn put(&self, key: &str, model: &str, version: &str, answer: &Value) -> Result<(), String> {
        let (Some(dir), Some(path)) = (&self.dir, self.path(key)) else {
            return Ok(());
        };
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let entry = json!({
            "format": FORMAT, "key": key, "model": model, "policy_version": version,
            "answer": answer,
        });
        let bytes = crate::secrets::redact(&entry.to_string()).into_bytes();
        // Unique per process and write: two judges storing at once never share a file.
        static N: AtomicU64 = AtomicU64::new(0);
        let tmp = dir.join(format!(
            ".{key}.{}.{}.tmp",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let write = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &path));
        write.map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write {}: {e}", path.display())
        })
    }
}

/// Whether a file name is one the cache writes: `KEY.json` or its temporary files.
fn ours(name: &str) -> bool {
    let hex = |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if let Some(key) = name.strip_suffix(".json") {
        return hex(key);
    }
    name.strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .and_then(|n| n.split('.').next())
        .is_some_and(hex)
}

/// Removes the cache's entries from `dir` (only files the cache writes; the folder too
/// when that leaves it empty). The count removed; 0 when there is no such folder.
pub fn clear(dir: &Path) -> std::io::Result<usize> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        if entry.file_type()?.is_file() && name.to_str().is_some_and(ours) {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    // Left in place when anything else is in it.
    let _ = std::fs::remove_dir(dir);
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_change_with_model_request_and_version() {
        let r = json!({"messages": [{"role": "user", "content": "x"}]});
        let k = Cache::key("e", "m", &r, "3");
        assert_eq!(k.len(), 64);
        assert_eq!(k, Cache::key("e", "m", &r, "3"));
        assert_ne!(k, Cache::key("e2", "m", &r, "3"));
        assert_ne!(k, Cache::key("e", "n", &r, "3"));
        assert_ne!(k, Cache::key("e", "m", &r, "4"));
        assert_ne!(k, Cache::key("e", "m", &json!({"messages": []}), "3"));
    }

    #[test]
    fn entries_round_trip_and_corruption_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("c"));
        let key = Cache::key("e", "m", &json!({}), "1");
        assert_eq!(cache.get(&key), Lookup::Miss);
        cache.put(&key, "m", "1", &json!({"a": 1})).unwrap();
        assert_eq!(cache.get(&key), Lookup::Hit(json!({"a": 1})));
        std::fs::write(dir.path().join(format!("c/{key}.json")), "{trunc").unwrap();
        assert!(matches!(cache.get(&key), Lookup::Corrupt(w) if w.ends_with("is not JSON")));
        let other = Cache::key("e", "m", &json!({}), "2");
        std::fs::copy(
            dir.path().join(format!("c/{key}.json")),
            dir.path().join(format!("c/{other}.json")),
        )
        .unwrap();
        cache.put(&key, "m", "1", &json!({"a": 1})).unwrap();
        std::fs::copy(
            dir.path().join(format!("c/{key}.json")),
            dir.path().join(format!("c/{other}.json")),
        )
        .unwrap();
        assert!(matches!(cache.get(&other), Lookup::Corrupt(w) if w.contains("another key")));
        assert_eq!(Cache::off().get(&key), Lookup::Off);
    }

    #[test]
    fn clear_removes_only_the_caches_files() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let key = Cache::key("e", "m", &json!({}), "1");
        cache.put(&key, "m", "1", &json!({})).unwrap();
        std::fs::write(dir.path().join(format!(".{key}.1.2.tmp")), "").unwrap();
        std::fs::write(dir.path().join("notes.json"), "{}").unwrap();
        assert_eq!(clear(dir.path()).unwrap(), 2);
        assert!(dir.path().join("notes.json").is_file());
        assert_eq!(clear(&dir.path().join("absent")).unwrap(), 0);
    }
}
