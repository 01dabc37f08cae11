//! Mutual TLS material. Two certificate authorities, made at run time with `rcgen`:
//! the *party CA* signs each party's server certificate (name `party-K`), the
//! *coordinator CA* signs the server's client certificate. A party accepts only clients
//! whose certificate chains to the coordinator CA (so neither another party nor a
//! stranger can drive it); the server accepts party `k` only if its certificate chains
//! to the party CA and names `party-k`.

use crate::error::{FedError, Result, TlsError};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use std::path::Path;

/// A certificate and its private key, PEM-encoded.
#[derive(Debug, Clone)]
pub struct Pem {
    /// Certificate chain (PEM).
    pub cert: String,
    /// Private key (PEM).
    pub key: String,
}

/// The TLS name of party `k` (its certificate's subject alternative name).
pub fn party_name(k: usize) -> String {
    format!("party-{k}")
}

/// Test certificates for one run: two CAs, `K` party certificates, one coordinator
/// certificate.
#[derive(Debug, Clone)]
pub struct TestPki {
    /// CA of the parties' server certificates (PEM).
    pub party_ca: String,
    /// CA of the coordinator's client certificate (PEM).
    pub coordinator_ca: String,
    /// Party `k`'s certificate and key.
    pub parties: Vec<Pem>,
    /// The coordinator's client certificate and key.
    pub coordinator: Pem,
}

fn tls_err(e: rcgen::Error) -> FedError {
    TlsError::Certificate(e).into()
}

/// A fresh CA (self-signed).
pub fn new_ca(name: &str) -> Result<(String, Issuer<'static, KeyPair>)> {
    let key = KeyPair::generate().map_err(tls_err)?;
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::CrlSign,
    ];
    let cert = params.self_signed(&key).map_err(tls_err)?;
    Ok((cert.pem(), Issuer::new(params, key)))
}

/// A leaf certificate for `name`, signed by `ca`, for server or client use.
pub fn leaf(name: &str, ca: &Issuer<'static, KeyPair>, server: bool) -> Result<Pem> {
    let key = KeyPair::generate().map_err(tls_err)?;
    let mut params = CertificateParams::new(vec![name.to_string()]).map_err(tls_err)?;
    params.distinguished_name.push(DnType::CommonName, name);
    params.extended_key_usages = vec![if server {
        ExtendedKeyUsagePurpose::ServerAuth
    } else {
        ExtendedKeyUsagePurpose::ClientAuth
    }];
    let cert = params.signed_by(&key, ca).map_err(tls_err)?;
    Ok(Pem {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

impl TestPki {
    /// Generates everything for `k` parties.
    pub fn generate(k: usize) -> Result<Self> {
        let (party_ca, pissuer) = new_ca("dp-federated party CA")?;
        let (coordinator_ca, cissuer) = new_ca("dp-federated coordinator CA")?;
        let parties = (0..k)
            .map(|i| leaf(&party_name(i), &pissuer, true))
            .collect::<Result<Vec<_>>>()?;
        let coordinator = leaf("coordinator", &cissuer, false)?;
        Ok(Self {
            party_ca,
            coordinator_ca,
            parties,
            coordinator,
        })
    }

    /// Writes `party-ca.pem`, `coordinator-ca.pem`, `party-K.pem` / `party-K.key` and
    /// `coordinator.pem` / `coordinator.key` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let w = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text)
                .map_err(|e| FedError::io(format!("writing {}", dir.join(name).display()), e))
        };
        w("party-ca.pem", &self.party_ca)?;
        w("coordinator-ca.pem", &self.coordinator_ca)?;
        for (i, p) in self.parties.iter().enumerate() {
            w(&format!("party-{i}.pem"), &p.cert)?;
            w(&format!("party-{i}.key"), &p.key)?;
        }
        w("coordinator.pem", &self.coordinator.cert)?;
        w("coordinator.key", &self.coordinator.key)
    }
}

/// Reads a PEM file.
pub fn read_pem(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| FedError::io(format!("reading {}", path.display()), e))
}
