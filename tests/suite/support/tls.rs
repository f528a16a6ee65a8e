//! Loopback TLS for the suite: a throw-away certificate authority and a server
//! certificate it signs (made by the `openssl` command line), and a TLS front
//! ([`tls_relay`]) that terminates TLS with that certificate and relays the
//! bytes to a plain TCP port (a DevTools endpoint, for `wss://` CDP URLs).
//! A process trusts the authority through `SSL_CERT_FILE` = [`TestCa::ca_pem`].

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use futures::FutureExt;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::common::run_ok;
use super::fake::TestServer;
use super::prereq::require_program;

/// A certificate authority and one server certificate for `127.0.0.1` and
/// `localhost`, in a temporary directory kept as long as this value.
pub struct TestCa {
    dir: tempfile::TempDir,
}

impl TestCa {
    pub fn new() -> Self {
        require_program("openssl");
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let mut c = Command::new("openssl");
            c.args(args).current_dir(dir.path());
            run_ok(c);
        };
        std::fs::write(
            dir.path().join("leaf.ext"),
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n\
             extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
        )
        .unwrap();
        // A name of its own: another TestCa is another issuer, not a look-alike.
        let subject = format!("/CN=hermes-mcp test CA {}", fastrand::u64(..));
        run(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            &subject,
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ]);
        run(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=127.0.0.1",
        ]);
        run(&[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
        ]);
        TestCa { dir }
    }

    /// The authority's certificate (PEM): what `SSL_CERT_FILE` names to trust it.
    pub fn ca_pem(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    fn server_config(&self) -> Arc<rustls::ServerConfig> {
        hermes_mcp::net::client::install_crypto();
        let file = |n: &str| -> PathBuf { self.dir.path().join(n) };
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(file("leaf.pem"))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let key = PrivateKeyDer::from_pem_file(file("leaf.key")).unwrap();
        Arc::new(
            rustls::ServerConfig::builder()
                .with_no_client_auth()
                .with_single_cert(certs, key)
                .unwrap(),
        )
    }
}

/// A TLS server on 127.0.0.1 (certificate signed by `ca`) relaying each
/// connection's bytes to `127.0.0.1:to_port`. A client that refuses the
/// certificate ends its connection; nothing reaches `to_port` then.
pub fn tls_relay(ca: &TestCa, to_port: u16) -> TestServer {
    let acceptor = tokio_rustls::TlsAcceptor::from(ca.server_config());
    TestServer::websocket(move |tcp| {
        let acceptor = acceptor.clone();
        async move {
            let Ok(mut tls) = acceptor.accept(tcp).await else {
                return;
            };
            let Ok(mut plain) = tokio::net::TcpStream::connect(("127.0.0.1", to_port)).await else {
                return;
            };
            let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
        }
        .boxed()
    })
}
