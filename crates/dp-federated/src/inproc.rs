//! The in-process transport: every party runs on its own thread and owns its data; the
//! server and the parties exchange only the protobuf-encoded bytes of the messages
//! over channels, as the gRPC transport does.

use crate::coordinator::Transport;
use crate::error::{Fault, FedError, Phase, Result};
use crate::party::{PartyHost, RoundReply};
use crate::pb;
use prost::Message;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// A request to a party thread: the encoded message (`Describe` and `Finish` carry
/// nothing a party reads).
enum Request {
    Describe,
    Configure(Vec<u8>),
    Round(Vec<u8>),
    Stop,
}

type Reply = std::result::Result<Vec<u8>, String>;

struct Link {
    tx: Sender<Request>,
    rx: Receiver<Reply>,
    thread: Option<JoinHandle<()>>,
}

/// Parties on threads, channels between them and the server.
pub struct InProcess {
    links: Vec<Link>,
    deadline: Duration,
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcess")
            .field("parties", &self.links.len())
            .field("deadline", &self.deadline)
            .finish()
    }
}

fn party_loop(mut host: PartyHost, rx: Receiver<Request>, tx: Sender<Reply>) {
    while let Ok(req) = rx.recv() {
        let reply: Reply = match req {
            Request::Describe => Ok(host.describe().encode_to_vec()),
            Request::Configure(b) => pb::Setup::decode(b.as_slice())
                .map_err(|e| e.to_string())
                .and_then(|s| host.configure(&s).map_err(|e| e.to_string()))
                .map(|r| r.encode_to_vec()),
            Request::Round(b) => {
                match pb::Downlink::decode(b.as_slice())
                    .map_err(|e| e.to_string())
                    .and_then(|d| host.round(&d).map_err(|e| e.to_string()))
                {
                    Ok(RoundReply::Uplink(u)) => Ok(u.encode_to_vec()),
                    Ok(RoundReply::Exit) => return,
                    Ok(RoundReply::Hang) => {
                        // Never answer again; leave when the server hangs up.
                        while rx.recv().is_ok() {}
                        return;
                    }
                    Err(e) => Err(e),
                }
            }
            Request::Stop => {
                // No answer (the server does not wait for one); ending the thread
                // closes the channel, so any later request fails as "died".
                host.stop();
                return;
            }
        };
        if tx.send(reply).is_err() {
            return;
        }
    }
}

impl InProcess {
    /// Starts one thread per party. `deadline` bounds each answer.
    pub fn start(hosts: Vec<PartyHost>, deadline: Duration) -> Self {
        let links = hosts
            .into_iter()
            .enumerate()
            .map(|(i, host)| {
                let (req_tx, req_rx) = mpsc::channel();
                let (rep_tx, rep_rx) = mpsc::channel();
                let thread = std::thread::Builder::new()
                    .name(format!("party-{i}"))
                    .spawn(move || party_loop(host, req_rx, rep_tx))
                    .ok();
                Link {
                    tx: req_tx,
                    rx: rep_rx,
                    thread,
                }
            })
            .collect();
        Self { links, deadline }
    }

    /// Sends one request to every party, then collects the answers in party order.
    fn exchange<T: Message + Default>(
        &mut self,
        phase: Phase,
        make: impl Fn(usize) -> Request,
    ) -> Result<Vec<T>> {
        let k = self.links.len();
        for i in 0..k {
            if self.links[i].tx.send(make(i)).is_err() {
                return Err(FedError::party(
                    i,
                    phase,
                    Fault::Died,
                    "its thread has ended",
                ));
            }
        }
        let start = std::time::Instant::now();
        let mut out = Vec::with_capacity(k);
        for i in 0..k {
            let left = self.deadline.saturating_sub(start.elapsed());
            let bytes = match self.links[i].rx.recv_timeout(left) {
                Ok(Ok(b)) => b,
                Ok(Err(e)) => return Err(FedError::party(i, phase, Fault::Refused, e)),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(FedError::party(
                        i,
                        phase,
                        Fault::Timeout,
                        format!("no answer within {:?}", self.deadline),
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(FedError::party(
                        i,
                        phase,
                        Fault::Died,
                        "its thread has ended",
                    ))
                }
            };
            out.push(
                T::decode(bytes.as_slice())
                    .map_err(|e| FedError::party(i, phase, Fault::Malformed, e.to_string()))?,
            );
        }
        Ok(out)
    }
}

impl Transport for InProcess {
    fn parties(&self) -> usize {
        self.links.len()
    }
    fn describe(&mut self) -> Result<Vec<pb::Shape>> {
        self.exchange(Phase::Setup, |_| Request::Describe)
    }
    fn configure(&mut self, setups: &[pb::Setup]) -> Result<Vec<pb::SetupReply>> {
        self.exchange(Phase::Setup, |i| {
            Request::Configure(setups[i].encode_to_vec())
        })
    }
    fn round(&mut self, down: &pb::Downlink) -> Result<Vec<pb::Uplink>> {
        let b = down.encode_to_vec();
        self.exchange(Phase::Round(down.round), |_| Request::Round(b.clone()))
    }
    fn stop(&mut self, _reason: &str) {
        for link in &mut self.links {
            // A dead or hung party is skipped: the send fails or nobody answers.
            let _ = link.tx.send(Request::Stop);
        }
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        // Closing the channels ends every party thread (a hung one included).
        let links = std::mem::take(&mut self.links);
        let mut threads = Vec::new();
        for mut l in links {
            threads.extend(l.thread.take());
            drop(l);
        }
        for t in threads {
            let _ = t.join();
        }
    }
}
