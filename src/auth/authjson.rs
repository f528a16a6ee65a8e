//! Hermes' `auth.json` as typed structs (hermes-agent: hermes_cli/auth.py
//! `_load_auth_store`/`_save_auth_store`, agent/credential_pool.py): the
//! fields hermes-mcp reads or writes are named, everything else rides along
//! in `extra` at each level, and a field whose value has another shape than
//! ours is kept as it came ([`Kept`]). So a rewrite (a rotated token) keeps
//! every field Hermes, or a newer Hermes, wrote, and the file's key order
//! ([`AuthStore::to_value`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::lenient::{Kept, kept};

/// `providers`: each provider's singleton sign-in.
pub type Providers = BTreeMap<String, Kept<ProviderState>>;
/// One provider's `credential_pool` list.
pub type Pool = Vec<Kept<PoolEntry>>;
/// `credential_pool`: each provider's list.
pub type Pools = BTreeMap<String, Kept<Pool>>;

/// The whole store. Keyed maps are read into `BTreeMap`s; the file's key
/// order is restored on write from the store as it was read. No `Debug`:
/// it holds tokens.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct AuthStore {
    /// `providers.<id>`: the singleton sign-in of each provider.
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub providers: Option<Kept<Providers>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub active_provider: Option<Kept<String>>,
    /// `credential_pool.<id>`: each provider's pool entries.
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub credential_pool: Option<Kept<Pools>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub version: Option<Kept<i64>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_at: Option<Kept<String>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// The store as read, whose key order a write keeps.
    #[serde(skip)]
    read_as: Value,
}

/// `providers.<id>`: a sign-in's tokens and whatever else the provider keeps
/// (the Nous Portal keeps its tokens at this level, in `extra`).
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct ProviderState {
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub tokens: Option<Kept<Tokens>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_refresh: Option<Kept<String>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `providers.<id>.tokens`.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct Tokens {
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub access_token: Option<Kept<String>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_token: Option<Kept<String>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One `credential_pool.<id>` entry.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct PoolEntry {
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<Kept<String>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub priority: Option<Kept<i64>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub auth_type: Option<Kept<String>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub access_token: Option<Kept<String>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_token: Option<Kept<String>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub base_url: Option<Kept<String>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_status: Option<Kept<String>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_status_at: Option<Kept<Value>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_error_code: Option<Kept<i64>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_error_reset_at: Option<Kept<Value>>,
    #[serde(
        default,
        deserialize_with = "kept",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_refresh: Option<Kept<String>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Never prints the tokens.
impl std::fmt::Debug for PoolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolEntry")
            .field("id", &self.id())
            .field("priority", &self.priority())
            .field("last_status", &self.last_status())
            .finish_non_exhaustive()
    }
}

/// A string field that is present and a string.
fn text(f: &Option<Kept<String>>) -> Option<&str> {
    f.as_ref()?.typed().map(String::as_str)
}

/// A field present as a value (an explicit `null` reads as absent).
fn value(f: &Option<Kept<Value>>) -> Option<&Value> {
    f.as_ref()?.typed().filter(|v| !v.is_null())
}

/// A field present with its own type (`T`), or absent.
fn required_ok<T>(f: &Option<Kept<T>>) -> bool {
    !matches!(f, Some(Kept::Raw(_)))
}

/// A field present with its own type, `null`, or absent.
fn optional_ok<T>(f: &Option<Kept<T>>) -> bool {
    !matches!(f, Some(Kept::Raw(v)) if !v.is_null())
}

/// `Some(v)` as a present, typed field.
fn set<T>(v: T) -> Option<Kept<T>> {
    Some(Kept::Typed(v))
}

impl PoolEntry {
    /// An entry built from tokens (the singleton Hermes would seed a pool from).
    pub fn seeded(id: &str, access_token: &str, refresh_token: Option<&str>) -> Self {
        PoolEntry {
            id: set(id.to_string()),
            access_token: set(access_token.to_string()),
            refresh_token: refresh_token.map(|r| Kept::Typed(r.to_string())),
            ..PoolEntry::default()
        }
    }

    /// Every named field has the type hermes-mcp reads it as (`id` and
    /// `priority` not `null`); an entry that is not is skipped by readers.
    pub fn well_formed(&self) -> bool {
        required_ok(&self.id)
            && required_ok(&self.priority)
            && optional_ok(&self.auth_type)
            && optional_ok(&self.access_token)
            && optional_ok(&self.refresh_token)
            && optional_ok(&self.base_url)
            && optional_ok(&self.last_status)
            && optional_ok(&self.last_error_code)
    }

    pub fn id(&self) -> &str {
        text(&self.id).unwrap_or("")
    }

    pub fn priority(&self) -> i64 {
        self.priority
            .as_ref()
            .and_then(Kept::typed)
            .copied()
            .unwrap_or(0)
    }

    pub fn auth_type(&self) -> Option<&str> {
        text(&self.auth_type)
    }

    pub fn access_token(&self) -> Option<&str> {
        text(&self.access_token)
    }

    pub fn refresh_token(&self) -> Option<&str> {
        text(&self.refresh_token)
    }

    pub fn base_url(&self) -> Option<&str> {
        text(&self.base_url)
    }

    pub fn last_status(&self) -> Option<&str> {
        text(&self.last_status)
    }

    pub fn last_status_at(&self) -> Option<&Value> {
        value(&self.last_status_at)
    }

    pub fn last_error_code(&self) -> Option<i64> {
        self.last_error_code.as_ref()?.typed().copied()
    }

    pub fn last_error_reset_at(&self) -> Option<&Value> {
        value(&self.last_error_reset_at)
    }

    /// Store a rotated pair, stamped `last_refresh` and `last_status: ok`.
    pub fn set_rotated(&mut self, access: &str, refresh: &str, stamp: &str) {
        self.access_token = set(access.to_string());
        self.refresh_token = set(refresh.to_string());
        self.last_refresh = set(stamp.to_string());
        self.last_status = set("ok".to_string());
    }
}

impl Tokens {
    pub fn access_token(&self) -> Option<&str> {
        text(&self.access_token)
    }

    pub fn refresh_token(&self) -> Option<&str> {
        text(&self.refresh_token)
    }
}

impl ProviderState {
    /// `tokens` when it is an object.
    pub fn tokens(&self) -> Option<&Tokens> {
        self.tokens.as_ref()?.typed()
    }

    /// A field kept as it came (`discovery`, the Nous Portal's tokens, …).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.extra.get(key)
    }
}

impl AuthStore {
    /// The store from a JSON value; anything but an object reads as empty (as Hermes).
    pub fn from_value(v: Value) -> Self {
        if !v.is_object() {
            return AuthStore::default();
        }
        let read_as = v.clone();
        let mut store = match serde_json::from_value::<AuthStore>(v) {
            Ok(s) => s,
            // Every named field takes any value, so this is not expected;
            // still, nothing is lost: the object rides along whole.
            Err(_) => AuthStore {
                extra: read_as.as_object().cloned().unwrap_or_default(),
                ..AuthStore::default()
            },
        };
        store.read_as = read_as;
        store
    }

    /// The store as JSON, keys in the order the file had them (keys it did
    /// not have follow, in the order written).
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        let mut v = serde_json::to_value(self)?;
        order_like(&mut v, &self.read_as);
        Ok(v)
    }

    /// No field at all (a missing or empty file).
    pub fn is_empty(&self) -> bool {
        self.providers.is_none()
            && self.active_provider.is_none()
            && self.credential_pool.is_none()
            && self.version.is_none()
            && self.updated_at.is_none()
            && self.extra.is_empty()
    }

    /// `providers.<provider>` when it is an object.
    pub fn provider(&self, provider: &str) -> Option<&ProviderState> {
        self.providers.as_ref()?.typed()?.get(provider)?.typed()
    }

    pub fn provider_mut(&mut self, provider: &str) -> Option<&mut ProviderState> {
        self.providers
            .as_mut()?
            .typed_mut()?
            .get_mut(provider)?
            .typed_mut()
    }

    /// `credential_pool.<provider>` when it is a list (entries of any shape).
    pub fn pool(&self, provider: &str) -> Option<&[Kept<PoolEntry>]> {
        let list = self.credential_pool.as_ref()?.typed()?.get(provider)?;
        list.typed().map(Vec::as_slice)
    }

    pub fn pool_mut(&mut self, provider: &str) -> Option<&mut Pool> {
        self.credential_pool
            .as_mut()?
            .typed_mut()?
            .get_mut(provider)?
            .typed_mut()
    }

    /// Stamp `version` and `updated_at` as Hermes' `_save_auth_store` does.
    pub fn stamp(&mut self, version: i64, updated_at: String) {
        self.version = set(version);
        self.updated_at = set(updated_at);
    }
}

/// Put `v`'s object keys in `like`'s order, recursively (list items by
/// position); keys `like` lacks keep their order after the others.
fn order_like(v: &mut Value, like: &Value) {
    match (v, like) {
        (Value::Object(m), Value::Object(l)) => {
            let mut old = std::mem::take(m);
            for (k, lv) in l {
                if let Some(mut x) = old.shift_remove(k) {
                    order_like(&mut x, lv);
                    m.insert(k.clone(), x);
                }
            }
            m.extend(old);
        }
        (Value::Array(a), Value::Array(l)) => {
            for (x, lx) in a.iter_mut().zip(l) {
                order_like(x, lx);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STORE: &str = r#"{
  "zeta": {"a": 1},
  "credential_pool": {
    "x": [
      {"label": "L", "id": "a", "access_token": "old", "last_status": null, "new_field": [1]},
      {"id": 7},
      "odd"
    ],
    "y": {"not": "a list"}
  },
  "providers": {
    "x": {"tokens": {"id_token": "i", "access_token": "old", "refresh_token": 5}, "keep": 1, "last_refresh": null},
    "nous": {"access_token": "n", "portal_base_url": "https://p"},
    "weird": [1, 2]
  },
  "active_provider": null,
  "version": 1,
  "updated_at": "2026-01-01T00:00:00+00:00"
}"#;

    #[test]
    fn unknown_fields_and_odd_shapes_survive_a_round_trip() {
        let v: Value = serde_json::from_str(STORE).expect("json");
        let store = AuthStore::from_value(v.clone());
        let back = store.to_value().expect("serialize");
        assert_eq!(
            serde_json::to_string(&back).expect("text"),
            serde_json::to_string(&v).expect("text"),
            "same keys, values and order"
        );
        // Typed reads see what has the expected shape.
        let x = store.provider("x").expect("x");
        assert_eq!(x.tokens().and_then(Tokens::access_token), Some("old"));
        assert_eq!(x.tokens().and_then(Tokens::refresh_token), None);
        assert!(store.provider("weird").is_none());
        assert_eq!(
            store.provider("nous").and_then(|s| s.get("access_token")),
            Some(&Value::from("n"))
        );
        let pool = store.pool("x").expect("pool");
        let typed: Vec<&PoolEntry> = pool.iter().filter_map(Kept::typed).collect();
        assert_eq!(typed.len(), 2);
        assert!(typed[0].well_formed());
        assert!(!typed[1].well_formed(), "a numeric id");
        assert!(store.pool("y").is_none());
    }

    #[test]
    fn an_edit_keeps_the_rest_and_appends_new_keys() {
        let v: Value = serde_json::from_str(STORE).expect("json");
        let mut store = AuthStore::from_value(v);
        let e = store.pool_mut("x").expect("pool")[0]
            .typed_mut()
            .expect("entry");
        e.set_rotated("new", "r2", "2026-02-02T00:00:00Z");
        store.stamp(1, "2026-02-02T00:00:00+00:00".into());
        let back = store.to_value().expect("serialize");
        let e = &back["credential_pool"]["x"][0];
        let keys: Vec<&str> = e
            .as_object()
            .expect("obj")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "label",
                "id",
                "access_token",
                "last_status",
                "new_field",
                "refresh_token",
                "last_refresh"
            ]
        );
        assert_eq!(e["last_status"], "ok");
        assert_eq!(back["providers"]["x"]["keep"], 1);
        assert_eq!(back["zeta"]["a"], 1);
        let top: Vec<&str> = back
            .as_object()
            .expect("obj")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            top,
            [
                "zeta",
                "credential_pool",
                "providers",
                "active_provider",
                "version",
                "updated_at"
            ]
        );
    }

    #[test]
    fn not_an_object_reads_as_empty() {
        assert!(AuthStore::from_value(Value::from("x")).is_empty());
        assert!(AuthStore::from_value(serde_json::json!([1])).is_empty());
    }
}
