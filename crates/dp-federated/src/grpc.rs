//! gRPC over HTTP/2 (tonic, rustls with the ring provider), mutual TLS. Each party runs
//! the `Party` service ([`serve_party`]); the server dials every party ([`Grpc`]). The
//! parties are the gRPC servers because they are the long-lived data holders, each at an
//! address the organisation publishes, while the coordinator of a fit is a client that
//! comes and goes (the same parties can serve later fits).

use crate::coordinator::Transport;
use crate::error::{Fault, FedError, Phase, Result, TlsError};
use crate::party::{PartyHost, RoundReply};
use crate::pb;
use crate::pb::party_client::PartyClient;
use crate::pb::party_server::{Party, PartyServer};
use crate::tls::party_name;
use prost::Message;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tonic::transport::{
    server::TcpIncoming, Certificate, Channel, ClientTlsConfig, Endpoint, Identity, ServerTlsConfig,
};
use tonic::{Code, Request, Response, Status};

/// What a party does on an injected `exit` fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitMode {
    /// Shut the service down and report [`Served::ExitInjected`], so that the party binary
    /// ends its process with a failure code (the library itself never ends the process).
    Process,
    /// Shut the service down (parties run as tasks).
    Service,
}

/// How [`serve_party`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Served {
    /// The server sent `Stop`, or no request came for the idle time.
    Stopped,
    /// An injected `exit` fault ended the service in [`ExitMode::Process`]; the caller (the
    /// party binary) is expected to end its process with a failure code.
    ExitInjected,
}

/// The TLS material of a party: its certificate and key, and the CA its clients must
/// chain to (the coordinator CA).
#[derive(Debug, Clone)]
pub struct PartyTls {
    /// Party certificate (PEM).
    pub cert: String,
    /// Party key (PEM).
    pub key: String,
    /// Coordinator CA (PEM).
    pub client_ca: String,
}

/// The TLS material of the server: its client certificate and key, and the CA every
/// party's certificate must chain to.
#[derive(Debug, Clone)]
pub struct CoordinatorTls {
    /// Client certificate (PEM).
    pub cert: String,
    /// Client key (PEM).
    pub key: String,
    /// Party CA (PEM).
    pub party_ca: String,
}

struct Service {
    host: Arc<Mutex<PartyHost>>,
    stop: Arc<tokio::sync::Notify>,
    last_seen: Arc<Mutex<Instant>>,
    exit: ExitMode,
    exited: Arc<std::sync::atomic::AtomicBool>,
}

impl Service {
    fn touch(&self) {
        if let Ok(mut t) = self.last_seen.lock() {
            *t = Instant::now();
        }
    }
    fn with_host<T>(&self, f: impl FnOnce(&mut PartyHost) -> T) -> std::result::Result<T, Status> {
        self.touch();
        let mut h = self
            .host
            .lock()
            .map_err(|_| Status::internal("party state poisoned"))?;
        Ok(f(&mut h))
    }
}

#[tonic::async_trait]
impl Party for Service {
    async fn get_shape(
        &self,
        _: Request<pb::Describe>,
    ) -> std::result::Result<Response<pb::Shape>, Status> {
        self.with_host(|h| h.describe()).map(Response::new)
    }
    async fn configure(
        &self,
        req: Request<pb::Setup>,
    ) -> std::result::Result<Response<pb::SetupReply>, Status> {
        let s = req.into_inner();
        self.with_host(|h| h.configure(&s))?
            .map(Response::new)
            .map_err(|e| Status::failed_precondition(e.to_string()))
    }
    async fn round(
        &self,
        req: Request<pb::Downlink>,
    ) -> std::result::Result<Response<pb::Uplink>, Status> {
        let d = req.into_inner();
        let host = self.host.clone();
        self.touch();
        let reply = tokio::task::spawn_blocking(move || match host.lock() {
            Ok(mut h) => h.round(&d).map_err(|e| e.to_string()),
            Err(_) => Err("party state poisoned".to_string()),
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?;
        match reply {
            Ok(RoundReply::Uplink(u)) => Ok(Response::new(u)),
            Ok(RoundReply::Hang) => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Err(Status::deadline_exceeded("hung"))
            }
            Ok(RoundReply::Exit) => {
                if self.exit == ExitMode::Process {
                    self.exited.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                self.stop.notify_one();
                Err(Status::unavailable("party exited"))
            }
            Err(e) => Err(Status::failed_precondition(e)),
        }
    }
    async fn stop(
        &self,
        _: Request<pb::Finish>,
    ) -> std::result::Result<Response<pb::FinishReply>, Status> {
        self.with_host(|h| h.stop())?;
        self.stop.notify_one();
        Ok(Response::new(pb::FinishReply {}))
    }
}

/// Serves one party on `listener` until the server sends `Stop`, or until no request
/// came for `idle` (so a party whose server vanished does not linger), or until an
/// injected `exit` fault (then [`Served::ExitInjected`] in [`ExitMode::Process`]).
pub async fn serve_party(
    host: PartyHost,
    listener: tokio::net::TcpListener,
    tls: &PartyTls,
    idle: Duration,
    exit: ExitMode,
) -> Result<Served> {
    let stop = Arc::new(tokio::sync::Notify::new());
    let last_seen = Arc::new(Mutex::new(Instant::now()));
    let exited = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let svc = Service {
        host: Arc::new(Mutex::new(host)),
        stop: stop.clone(),
        last_seen: last_seen.clone(),
        exit,
        exited: exited.clone(),
    };
    let tls_config = ServerTlsConfig::new()
        .identity(Identity::from_pem(&tls.cert, &tls.key))
        .client_ca_root(Certificate::from_pem(&tls.client_ca));
    let shutdown = async move {
        loop {
            tokio::select! {
                _ = stop.notified() => {
                    // Let the Stop answer reach the server before closing.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    return;
                }
                _ = tokio::time::sleep(Duration::from_millis(200)) => {
                    let seen = last_seen.lock().map(|t| t.elapsed()).unwrap_or_default();
                    if seen > idle {
                        return;
                    }
                }
            }
        }
    };
    tonic::transport::Server::builder()
        .tls_config(tls_config)
        .map_err(TlsError::ServerConfig)?
        .add_service(PartyServer::new(svc))
        .serve_with_incoming_shutdown(
            TcpIncoming::from(listener).with_nodelay(Some(true)),
            shutdown,
        )
        .await
        .map_err(TlsError::Serve)?;
    Ok(if exited.load(std::sync::atomic::Ordering::SeqCst) {
        Served::ExitInjected
    } else {
        Served::Stopped
    })
}

/// The gRPC transport of the server: one mutually authenticated channel per party.
#[derive(Debug)]
pub struct Grpc {
    rt: tokio::runtime::Runtime,
    clients: Vec<PartyClient<Channel>>,
    deadline: Duration,
}

fn fault_of(s: &Status) -> Fault {
    // tonic reports its own request timeout as `Cancelled: Timeout expired`.
    if detail_of(s).contains("Timeout expired") {
        return Fault::Timeout;
    }
    match s.code() {
        Code::DeadlineExceeded => Fault::Timeout,
        Code::FailedPrecondition | Code::InvalidArgument => Fault::Refused,
        Code::Internal if s.message().contains("decode") => Fault::Malformed,
        _ => Fault::Died,
    }
}

fn detail_of(s: &Status) -> String {
    let mut d = format!("{:?}: {}", s.code(), s.message());
    let mut src = std::error::Error::source(s);
    while let Some(e) = src {
        d.push_str(&format!(": {e}"));
        src = e.source();
    }
    d
}

impl Grpc {
    /// Connects to every party (`addrs[k]` is party `k`'s `host:port`), authenticating
    /// party `k` by the name `party-k` under the party CA and presenting the server's
    /// client certificate. `deadline` bounds the connection and every answer.
    pub fn connect(addrs: &[String], tls: &CoordinatorTls, deadline: Duration) -> Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| FedError::io("starting the runtime", e))?;
        let mut clients = Vec::with_capacity(addrs.len());
        for (k, addr) in addrs.iter().enumerate() {
            let fail = |d: String| {
                FedError::party(k, Phase::Setup, Fault::Connect, format!("{addr}: {d}"))
            };
            let cfg = ClientTlsConfig::new()
                .ca_certificate(Certificate::from_pem(&tls.party_ca))
                .identity(Identity::from_pem(&tls.cert, &tls.key))
                .domain_name(party_name(k));
            let ep = Endpoint::from_shared(format!("https://{addr}"))
                .map_err(|e| fail(e.to_string()))?
                .tls_config(cfg)
                .map_err(|e| fail(e.to_string()))?
                .connect_timeout(deadline)
                .timeout(deadline)
                .tcp_nodelay(true);
            let ch = rt.block_on(ep.connect()).map_err(|e| {
                let mut d = e.to_string();
                let mut src = std::error::Error::source(&e);
                while let Some(s) = src {
                    d.push_str(&format!(": {s}"));
                    src = s.source();
                }
                fail(d)
            })?;
            clients.push(PartyClient::new(ch));
        }
        Ok(Self {
            rt,
            clients,
            deadline,
        })
    }

    fn exchange<Q, A, F, Fut>(&mut self, phase: Phase, reqs: Vec<Q>, call: F) -> Result<Vec<A>>
    where
        Q: Message + Send + 'static,
        A: Message + Send + 'static,
        F: Fn(PartyClient<Channel>, Q) -> Fut,
        Fut:
            std::future::Future<Output = std::result::Result<Response<A>, Status>> + Send + 'static,
    {
        let deadline = self.deadline;
        let mut handles = Vec::with_capacity(reqs.len());
        let _guard = self.rt.enter();
        for (c, q) in self.clients.iter().zip(reqs) {
            let fut = call(c.clone(), q);
            handles.push(tokio::spawn(async move {
                tokio::time::timeout(deadline, fut).await
            }));
        }
        let results = self.rt.block_on(async {
            let mut out = Vec::with_capacity(handles.len());
            for h in handles {
                out.push(h.await);
            }
            out
        });
        let mut answers = Vec::with_capacity(results.len());
        for (i, r) in results.into_iter().enumerate() {
            let a = match r {
                Ok(Ok(Ok(resp))) => resp.into_inner(),
                Ok(Ok(Err(status))) => {
                    return Err(FedError::party(
                        i,
                        phase,
                        fault_of(&status),
                        detail_of(&status),
                    ))
                }
                Ok(Err(_)) => {
                    return Err(FedError::party(
                        i,
                        phase,
                        Fault::Timeout,
                        format!("no answer within {deadline:?}"),
                    ))
                }
                Err(e) => return Err(FedError::party(i, phase, Fault::Died, e.to_string())),
            };
            answers.push(a);
        }
        Ok(answers)
    }
}

impl Transport for Grpc {
    fn parties(&self) -> usize {
        self.clients.len()
    }
    fn describe(&mut self) -> Result<Vec<pb::Shape>> {
        let reqs = vec![pb::Describe {}; self.clients.len()];
        self.exchange(Phase::Setup, reqs, |mut c, q| async move {
            c.get_shape(q).await
        })
    }
    fn configure(&mut self, setups: &[pb::Setup]) -> Result<Vec<pb::SetupReply>> {
        self.exchange(Phase::Setup, setups.to_vec(), |mut c, q| async move {
            c.configure(q).await
        })
    }
    fn round(&mut self, down: &pb::Downlink) -> Result<Vec<pb::Uplink>> {
        let reqs = vec![down.clone(); self.clients.len()];
        self.exchange(Phase::Round(down.round), reqs, |mut c, q| async move {
            c.round(q).await
        })
    }
    fn stop(&mut self, reason: &str) {
        let deadline = self.deadline.min(Duration::from_secs(2));
        let clients = self.clients.clone();
        let reason = reason.to_string();
        self.rt.block_on(async move {
            let mut hs = Vec::new();
            for mut c in clients {
                let f = pb::Finish {
                    reason: reason.clone(),
                };
                hs.push(tokio::spawn(async move {
                    let _ = tokio::time::timeout(deadline, c.stop(f)).await;
                }));
            }
            for h in hs {
                let _ = h.await;
            }
        });
    }
}
