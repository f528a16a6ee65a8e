//! web_search / web_extract against loopback servers.
