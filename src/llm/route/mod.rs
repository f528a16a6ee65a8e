//! Routing: which provider, endpoint and model an auxiliary task runs on,
//! decided as Hermes decides it — [`resolve`] (the one task resolver),
//! [`auto`] (its auto-detection chains), [`clients`] (one provider's
//! endpoint as the resolver hands it out), [`apikey`] (Hermes' API-key
//! provider rules), [`capability`] (which models accept images) and
//! [`providers`] (Hermes' provider tables). Apart from the wires and tasks:
//! it reads config, environment and `auth.json` and makes no model call
//! (DeepInfra's catalog lookup aside, done at call time).

pub(crate) mod apikey;
pub(crate) mod auto;
pub(crate) mod capability;
pub(crate) mod clients;
#[doc(hidden)] // public for the test that checks the table against Hermes' registry
pub mod providers;
pub(crate) mod resolve;

pub(crate) use clients::catalog_vision_model;
pub(crate) use resolve::{NO_PROVIDER, Resolution, vision_mode};
