//! Mutual TLS: a party refuses a client without a certificate or with one from another
//! CA, and the server refuses a party whose certificate is from another CA or names
//! another party.

use dp_federated::coordinator;
use dp_federated::grpc::{serve_party, CoordinatorTls, ExitMode, Grpc, PartyTls};
use dp_federated::loopback::synthetic_lasso;
use dp_federated::party::{PartyHost, PartySecrets};
use dp_federated::pb::party_client::PartyClient;
use dp_federated::tls::{leaf, new_ca, TestPki};
use dp_federated::{split_contiguous, FedError, Phase};
use dp_optim::DistDpFwParams;
use std::time::Duration;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

/// Starts party 0 (its certificate from `pki`) on a loopback port; returns the runtime
/// serving it and its address.
fn start_party(pki: &TestPki, cert_of: usize) -> (tokio::runtime::Runtime, String) {
    let (cols, y) = synthetic_lasso(20, 4, 1);
    let data = split_contiguous(cols, y, 1).unwrap().remove(0);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let tls = PartyTls {
        cert: pki.parties[cert_of].cert.clone(),
        key: pki.parties[cert_of].key.clone(),
        client_ca: pki.coordinator_ca.clone(),
    };
    let host = PartyHost::new(data, PartySecrets::from_u64(1), 1, f64::INFINITY);
    rt.spawn(async move {
        serve_party(
            host,
            listener,
            &tls,
            Duration::from_secs(20),
            ExitMode::Service,
        )
        .await
    });
    (rt, addr)
}

/// Calls `GetShape` with the given client TLS; `Ok` if the party answered.
fn try_client(addr: &str, cfg: ClientTlsConfig) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let ch = Endpoint::from_shared(format!("https://{addr}"))
            .unwrap()
            .tls_config(cfg)
            .map_err(|e| e.to_string())?
            .timeout(Duration::from_secs(5))
            .connect()
            .await
            .map_err(|e| format!("connect: {e:?}"))?;
        PartyClient::new(ch)
            .get_shape(dp_federated::pb::Describe {})
            .await
            .map(|_| ())
            .map_err(|e| format!("rpc: {e:?}"))
    })
}

#[test]
fn a_party_refuses_clients_without_a_coordinator_certificate() {
    let pki = TestPki::generate(1).unwrap();
    let (_rt, addr) = start_party(&pki, 0);
    let base = || {
        ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(&pki.party_ca))
            .domain_name("party-0")
    };
    // The genuine coordinator certificate is accepted (the test can fail).
    let ok = base().identity(Identity::from_pem(
        &pki.coordinator.cert,
        &pki.coordinator.key,
    ));
    try_client(&addr, ok).unwrap();
    // No client certificate.
    assert!(try_client(&addr, base()).is_err());
    // A client certificate from another CA.
    let (_, other_ca) = new_ca("stranger CA").unwrap();
    let stranger = leaf("coordinator", &other_ca, false).unwrap();
    let bad = base().identity(Identity::from_pem(&stranger.cert, &stranger.key));
    assert!(try_client(&addr, bad).is_err());
    // Another party's certificate (party CA, not coordinator CA).
    let other = TestPki::generate(2).unwrap();
    let bad = base().identity(Identity::from_pem(
        &other.parties[1].cert,
        &other.parties[1].key,
    ));
    assert!(try_client(&addr, bad).is_err());
}

#[test]
fn the_server_refuses_a_party_from_another_ca_or_with_another_name() {
    let job = DistDpFwParams::new(1.0)
        .parties(1)
        .iterations(3)
        .sketch_dim(4)
        .epsilon(1.0)
        .delta(1e-5)
        .feature_bound(1.0)
        .label_bound(1.0)
        .build()
        .unwrap();
    let pki = TestPki::generate(2).unwrap();
    let coord = CoordinatorTls {
        cert: pki.coordinator.cert.clone(),
        key: pki.coordinator.key.clone(),
        party_ca: pki.party_ca.clone(),
    };
    // Genuine party 0: the fit runs (the test can fail).
    let (_rt0, addr) = start_party(&pki, 0);
    let mut t = Grpc::connect(&[addr], &coord, Duration::from_secs(5)).unwrap();
    coordinator::run(&mut t, &job, false).unwrap();
    // Party 0's address serving party 1's certificate: wrong name.
    let (_rt1, addr) = start_party(&pki, 1);
    let e = Grpc::connect(&[addr], &coord, Duration::from_secs(5))
        .and_then(|mut t| coordinator::run(&mut t, &job, false))
        .unwrap_err();
    assert!(
        matches!(
            e,
            FedError::Party {
                party: 0,
                phase: Phase::Setup,
                ..
            }
        ),
        "{e}"
    );
    // A party certificate from another CA.
    let mut foreign = TestPki::generate(1).unwrap();
    foreign.coordinator_ca = pki.coordinator_ca.clone();
    let (_rt2, addr) = start_party(&foreign, 0);
    let e = Grpc::connect(&[addr], &coord, Duration::from_secs(5))
        .and_then(|mut t| coordinator::run(&mut t, &job, false))
        .unwrap_err();
    assert!(
        matches!(
            e,
            FedError::Party {
                party: 0,
                phase: Phase::Setup,
                ..
            }
        ),
        "{e}"
    );
}
