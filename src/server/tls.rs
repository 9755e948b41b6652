//! The TLS a wire speaks to a `rediss://` server (socket.rs): the rustls client configuration,
//! made once per server when its URL is parsed, from the settings every such server shares
//! (`Tls`: a CA, a client certificate, `--tls-insecure`) and the URL's own `#insecure`.
//!
//! The redis crate builds a configuration of its own, inside each of its connections, for the
//! blocking connections that Sentinel groups and clusters still use (blocking.rs): it can
//! neither take this one nor hand out its own. So this is redlock's one place for it, and it
//! trusts what the crate's does, so that a server is trusted or refused the same either way:
//! - the CA file's certificates, when one is given, and only them; otherwise the system's trust
//!   store (read once a run). A store that cannot be read in part is not fatal, where the crate
//!   fails every connection: the certificates read are trusted, and a server signed by none of
//!   them is refused as any untrusted server is (diagnosis.rs: pass `--tls-ca`);
//! - the client certificate and key, when given, sent to a server that asks for one;
//! - with `insecure`, no check of the server's certificate or name, and no SNI;
//! - the server's name is the URL's host (socket.rs), checked against its certificate.

use super::client::Tls;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::{Arc, OnceLock};

/// The configuration of a wire's TLS to a server whose URL says `insecure` or not. An error is
/// why the TLS files cannot serve (said as `client::unusable_tls_files` says the crate's).
pub(super) fn config(tls: &Tls, insecure: bool) -> Result<Arc<ClientConfig>, String> {
    let roots = match (&tls.ca, insecure) {
        // Nothing is checked against them.
        (_, true) => RootCertStore::empty(),
        (Some(ca), false) => {
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(ca) {
                let cert =
                    cert.map_err(|e| format!("unable to parse root certificate PEM: {e}"))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("unable to parse TLS trust anchors: {e}"))?;
            }
            roots
        }
        (None, false) => system_roots().clone(),
    };
    let builder = ClientConfig::builder().with_root_certificates(roots);
    let mut config = match &tls.client {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("unable to parse client certificate chain PEM: {e}"))?;
            let key = PrivateKeyDer::from_pem_slice(key)
                .map_err(|e| format!("unable to extract private key from PEM file: {e}"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("unable to use the client certificate and key: {e}"))?
        }
        None => builder.with_no_client_auth(),
    };
    if insecure {
        config.enable_sni = false;
        let supported = config.crypto_provider().signature_verification_algorithms;
        config
            .dangerous()
            .set_certificate_verifier(Arc::new(Unchecked { supported }));
    }
    Ok(Arc::new(config))
}

/// The system's trusted certificates, read once a run (rustls-native-certs, as the crate).
fn system_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        let found = rustls_native_certs::load_native_certs();
        // A certificate the store holds but rustls cannot read trusts nothing; the rest still do.
        let _ = roots.add_parsable_certificates(found.certs);
        roots
    })
}

/// `--tls-insecure` and `#insecure`: every certificate accepted, its signatures unchecked.
#[derive(Debug)]
struct Unchecked {
    supported: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.supported.supported_schemes()
    }
}
