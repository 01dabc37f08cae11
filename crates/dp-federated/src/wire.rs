//! The protocol's messages converted to and from the library's types, in one place.
//!
//! * The job is `dp_optim`'s own: [`DistDpFwParams`], checked into a [`DistDpFw`]. The
//!   server sends each party a [`pb::Setup`] made from the checked job ([`setup`]); a
//!   party reads the parameters back ([`params`]) and checks them itself.
//! * The round messages are `dp_optim::dist_fw`'s [`Downlink`] and [`Uplink`]
//!   ([`downlink_to_pb`], [`downlink_from_pb`], [`uplink_to_pb`], [`uplink_from_pb`]).
//!
//! Conversion only decodes. The server role validates every uplink once
//! (`dp_optim::dist_fw::Server::receive`: sender, round, sign, sketch length, finite
//! entries, feature in the sender's block).

use crate::error::{Fault, FedError, Result};
use crate::pb;
use dp_optim::dist_fw::{DistCalibration, Downlink, RadiusMode, Uplink};
use dp_optim::{DistDpFw, DistDpFwParams};

/// The radius mode named `name` (`per-party` or `split`, as [`RadiusMode::name`] spells
/// them).
pub fn radius_mode(name: &str) -> Option<RadiusMode> {
    [RadiusMode::PerParty, RadiusMode::Split]
        .into_iter()
        .find(|m| m.name() == name)
}

/// The setup message of `job` to party `party`, for `n` rows and `p` features. Every
/// public parameter of the job travels (absent `tau` and residual clip as 0); the job's
/// accounting does not (the protocol always composes in zCDP), and a job under the
/// paper's nominal calibration is refused: the parties' ledgers would not be fitted to
/// the target the server reports.
pub fn setup(job: &DistDpFw, party: usize, n: usize, p: usize) -> Result<pb::Setup> {
    if job.calibration() != DistCalibration::Zcdp {
        return Err(FedError::Setup {
            field: "calibration",
            detail: "the protocol runs only the proven zCDP calibration".into(),
        });
    }
    let privacy = job.privacy();
    let (feature_bound, label_bound) = job.bounds();
    Ok(pb::Setup {
        party: party as u32,
        parties: job.parties() as u32,
        samples: n as u64,
        dim: p as u64,
        rounds: job.iterations(),
        sketch_dim: job.sketch_dim() as u64,
        sketch_seed: job.sketch_seed(),
        radius: job.radius(),
        radius_mode: job.radius_mode().name().into(),
        tau: job.tau().map_or(0, |t| t as u64),
        epsilon: privacy.epsilon.get(),
        delta: privacy.delta.get(),
        feature_bound,
        label_bound,
        selection_share: job.selection_share(),
        residual_clip: job.residual_clip().unwrap_or(0.0),
    })
}

/// The job's parameters as a setup message announces them (for `s.parties` parties),
/// not yet checked: the party checks the announced `K` against its own before it builds.
pub fn params(s: &pb::Setup) -> Result<DistDpFwParams> {
    let mode = radius_mode(&s.radius_mode).ok_or_else(|| FedError::Setup {
        field: "radius_mode",
        detail: format!(
            "unknown radius mode {:?} (expected per-party or split)",
            s.radius_mode
        ),
    })?;
    let too_large = |field| FedError::Setup {
        field,
        detail: "too large for this platform".into(),
    };
    let mut prm = DistDpFwParams::new(s.radius)
        .epsilon(s.epsilon)
        .delta(s.delta)
        .parties(usize::try_from(s.parties).map_err(|_| too_large("parties"))?)
        .iterations(s.rounds)
        .sketch_dim(usize::try_from(s.sketch_dim).map_err(|_| too_large("sketch_dim"))?)
        .sketch_seed(s.sketch_seed)
        .feature_bound(s.feature_bound)
        .label_bound(s.label_bound)
        .radius_mode(mode)
        .selection_share(s.selection_share);
    if s.tau > 0 {
        prm = prm.tau(usize::try_from(s.tau).map_err(|_| too_large("tau"))?);
    }
    if s.residual_clip != 0.0 {
        prm = prm.residual_clip(s.residual_clip);
    }
    Ok(prm)
}

/// The broadcast of a round, as sent.
pub fn downlink_to_pb(d: Downlink) -> pb::Downlink {
    pb::Downlink {
        round: d.round,
        q_hat: d.q_hat,
    }
}

/// The broadcast of a round, as a party reads it.
pub fn downlink_from_pb(d: &pb::Downlink) -> Downlink {
    Downlink {
        round: d.round,
        q_hat: d.q_hat.clone(),
    }
}

/// A party's answer, as sent.
pub fn uplink_to_pb(u: Uplink) -> pb::Uplink {
    pb::Uplink {
        party: u.party as u32,
        round: u.round,
        index: u.index as u64,
        sign: i32::from(u.sign),
        sketch: u.sketch,
    }
}

/// A party's answer, as the server reads it. Only a value the library's types cannot
/// hold is refused here (a sign outside `i8`, an index beyond `usize`), with the
/// server's own message; everything else is validated by the server role.
pub fn uplink_from_pb(u: pb::Uplink) -> std::result::Result<Uplink, (Fault, String)> {
    let sign = i8::try_from(u.sign)
        .map_err(|_| (Fault::Malformed, format!("sign {} is not +-1", u.sign)))?;
    let index = usize::try_from(u.index).map_err(|_| {
        (
            Fault::Malformed,
            format!("index {} is not one of the party's features", u.index),
        )
    })?;
    Ok(Uplink {
        party: u.party as usize,
        round: u.round,
        index,
        sign,
        sketch: u.sketch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> DistDpFwParams {
        DistDpFwParams::new(0.75)
            .epsilon(1.5)
            .delta(1e-6)
            .parties(3)
            .iterations(40)
            .sketch_dim(9)
            .sketch_seed(17)
            .feature_bound(2.0)
            .label_bound(0.5)
    }

    /// Every public parameter survives the setup message: the job a party rebuilds
    /// answers every getter as the server's does, with and without the optional ones.
    #[test]
    fn a_job_survives_the_setup_message() {
        let full = job()
            .tau(2)
            .residual_clip(3.25)
            .radius_mode(RadiusMode::Split)
            .selection_share(0.3);
        for prm in [job(), full] {
            let a = prm.build().unwrap();
            let s = setup(&a, 1, 100, 12).unwrap();
            assert_eq!((s.party, s.samples, s.dim), (1, 100, 12));
            let b = params(&s).unwrap().build().unwrap();
            assert_eq!(a.radius().to_bits(), b.radius().to_bits());
            assert_eq!(a.radius_mode(), b.radius_mode());
            assert_eq!(a.parties(), b.parties());
            assert_eq!(a.tau(), b.tau());
            assert_eq!(a.iterations(), b.iterations());
            assert_eq!(a.sketch_dim(), b.sketch_dim());
            assert_eq!(a.sketch_seed(), b.sketch_seed());
            assert_eq!(a.privacy(), b.privacy());
            assert_eq!(a.bounds(), b.bounds());
            assert_eq!(a.selection_share(), b.selection_share());
            assert_eq!(a.residual_clip(), b.residual_clip());
            assert_eq!(a.calibration(), b.calibration());
            // And the message made again from the rebuilt job is the same message.
            assert_eq!(setup(&b, 1, 100, 12).unwrap(), s);
        }
    }

    #[test]
    fn the_paper_calibration_and_an_unknown_radius_mode_are_refused() {
        let paper = job()
            .calibration(DistCalibration::PaperNominal)
            .build()
            .unwrap();
        let e = setup(&paper, 0, 100, 12).unwrap_err();
        assert!(
            matches!(
                &e,
                FedError::Setup {
                    field: "calibration",
                    ..
                }
            ),
            "{e}"
        );
        let mut s = setup(&job().build().unwrap(), 0, 100, 12).unwrap();
        s.radius_mode = "global".into();
        let e = params(&s).unwrap_err();
        assert!(
            e.to_string().contains("unknown radius mode \"global\""),
            "{e}"
        );
    }

    #[test]
    fn uplinks_convert_both_ways_and_unrepresentable_values_are_malformed() {
        let u = Uplink {
            party: 2,
            round: 7,
            index: 11,
            sign: -1,
            sketch: vec![0.5, -0.25],
        };
        assert_eq!(uplink_from_pb(uplink_to_pb(u.clone())).unwrap(), u);
        let mut bad = uplink_to_pb(u);
        bad.sign = 300;
        let (fault, detail) = uplink_from_pb(bad).unwrap_err();
        assert_eq!(
            (fault, detail.as_str()),
            (Fault::Malformed, "sign 300 is not +-1")
        );
    }
}
