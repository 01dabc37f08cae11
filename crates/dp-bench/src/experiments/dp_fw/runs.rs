//! One run of one configuration of the distributed Frank-Wolfe experiment ([`run_one`]) and
//! the record of a configuration's runs ([`record_of`]).

use super::*;

pub(super) fn run_one(p: &Problem, job: &Job, s: &Settings, seed: u64) -> Result<RunResult> {
    let data = &p.data;
    let (n, d) = (data.x().n_samples(), data.x().n_features());
    let t = iterations_for(n, job.eps);
    let m = job.m.unwrap_or_else(|| sketch_dim_for(s, n, t, p.delta));
    let loss = Squared::half();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let start = Instant::now();
    let fitted = match job.alg {
        Alg::Fw => FwParams::new(loss, L1Ball::new(ETA, d)?)
            .iterations(t)
            .build()?
            .fit_with_rng(data, &mut rng)?,
        Alg::DpFw => DpFwParams::new(loss, ETA)
            .epsilon(job.eps)
            .delta(p.delta)
            .accounting(Accounting::Exact)
            .iterations(t)
            .feature_bound(FEATURE_BOUND)
            .label_bound(LABEL_BOUND)
            .build()?
            .fit_with_rng(data, &mut rng)?,
        Alg::DpFwPaper => DpFwParams::new(loss, ETA)
            .epsilon(job.eps)
            .delta(p.delta)
            .accounting(Accounting::Paper)
            .iterations(t)
            .feature_bound(FEATURE_BOUND)
            .label_bound(LABEL_BOUND)
            .build()?
            .fit_with_rng(data, &mut rng)?,
        Alg::Bcfw => BcfwParams::new(loss, ETA)
            .parties(job.parties)
            .tau(job.tau)
            .iterations(t)
            .radius_mode(RadiusMode::PerParty)
            .build()?
            .fit_with_rng(data, &mut rng)?,
        Alg::DistDpFw | Alg::DistDpFwPaper => DistDpFwParams::new(ETA)
            .calibration(if job.alg == Alg::DistDpFwPaper {
                DistCalibration::PaperNominal
            } else {
                DistCalibration::Zcdp
            })
            .epsilon(job.eps)
            .delta(p.delta)
            .parties(job.parties)
            .tau(job.tau)
            .iterations(t)
            .sketch_dim(m)
            .sketch_seed(seed ^ 0x5eed)
            .feature_bound(FEATURE_BOUND)
            .label_bound(LABEL_BOUND)
            .radius_mode(RadiusMode::PerParty)
            .build()?
            .fit_with_rng(data, &mut rng)?,
        Alg::JlOnly => return jl_only(data, job, t, m, seed, start),
    };
    let seconds = start.elapsed().as_secs_f64();
    let mut out = RunResult {
        objective: fitted.diagnostics.objective,
        seconds,
        ..RunResult::default()
    };
    if fitted.model.coefficients.iter().any(|v| !v.is_finite()) {
        bail!("{}: non-finite coefficients", job.alg.name());
    }
    if let Some(pr) = &fitted.model.privacy {
        out.reported_epsilon = Some(pr.guarantee.epsilon);
        if let SolverPlan::DpFw(dp_optim::fw_plan::FwPlan::Central(plan)) = &pr.plan {
            out.selection_scale = Some(plan.noise_scale);
        }
        if let SolverPlan::DpFw(dp_optim::fw_plan::FwPlan::Distributed(plan)) = &pr.plan {
            out.selection_scale = Some(plan.selection_scale);
            // The server's counter for party 0; every party sends the same count.
            out.floats_per_party = vec![plan.uplink_floats_per_party; plan.parties];
            out.indices_per_party = vec![t; plan.parties];
        }
    }
    Ok(out)
}

/// The JL-only ablation: Algorithm 2's protocol with the public sketch and the same
/// residual clip (`C_res = B K eta + Y`, the solver's default), but no noise, run party by party through [`run_protocol`] so the server's own
/// counters are read for every party.
pub(super) fn jl_only(
    data: &Dataset<DenseDesign>,
    job: &Job,
    t: u64,
    m: usize,
    seed: u64,
    start: Instant,
) -> Result<RunResult> {
    let (x, y) = (data.x(), data.y());
    let (n, d) = (x.n_samples(), x.n_features());
    let set = L1BallProduct::contiguous(ETA, d, job.parties)?;
    let largest = set.blocks().iter().map(Vec::len).max().unwrap_or(1);
    let sketch = Sketch::generate(m, n, seed ^ 0x5eed)?;
    let mechanisms = PartyMechanisms {
        selection: None,
        sketch_noise: None,
        residual_clip: FEATURE_BOUND * job.parties as f64 * ETA + LABEL_BOUND,
    };
    let mut parties = Vec::with_capacity(job.parties);
    for (id, block) in set.blocks().iter().enumerate() {
        let cols = block
            .iter()
            .map(|&j| {
                let mut c = vec![0.0; n];
                x.for_each_in_col(j, |i, v| c[i] = v);
                c
            })
            .collect();
        let stream = stable_seed(seed, &["jl-only", "party"], &[id as u64]);
        parties.push(Party::new(
            id,
            block.clone(),
            cols,
            y.to_vec(),
            sketch.clone(),
            job.tau,
            mechanisms.clone(),
            t,
            ChaCha20Rng::seed_from_u64(stream),
            ChaCha20Rng::seed_from_u64(stream ^ 1),
        )?);
    }
    let mut server = Server::new(d, m, job.parties, ETA, job.tau as f64 / largest as f64);
    run_protocol(&mut server, &mut parties, t)?;
    let seconds = start.elapsed().as_secs_f64();
    let w = server.x();
    if w.iter().any(|v| !v.is_finite()) {
        bail!("jl-only: non-finite coefficients");
    }
    let mut z = vec![0.0; n];
    x.matvec(w, &mut z);
    let objective = dp_models::constraint::average_loss(&Squared::half(), &z, y);
    Ok(RunResult {
        objective,
        seconds,
        reported_epsilon: None,
        selection_scale: None,
        floats_per_party: server.uplink_floats().to_vec(),
        indices_per_party: server.uplink_indices().to_vec(),
    })
}

pub(super) fn record_of(
    p: &Problem,
    job: &Job,
    s: &Settings,
    results: &[Result<RunResult>],
) -> Result<Record> {
    let (n, d) = (p.data.x().n_samples(), p.data.x().n_features());
    let t = iterations_for(n, job.eps);
    let sketched = matches!(job.alg, Alg::JlOnly | Alg::DistDpFw | Alg::DistDpFwPaper);
    let m = job.m.unwrap_or_else(|| sketch_dim_for(s, n, t, p.delta));
    let (f_star, gap) = p.reference(job.alg, job.parties)?;
    let runs: Vec<Option<f64>> = results
        .iter()
        .map(|r| r.as_ref().ok().map(|r| r.objective - f_star))
        .collect();
    let failed = results.iter().filter(|r| r.is_err()).count();
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        eprintln!("dp-fw: {} {} failed: {e:#}", p.name, job.alg.name());
    }
    let ok: Vec<f64> = runs.iter().flatten().copied().collect();
    let stats = (failed == 0 && !ok.is_empty()).then(|| Stats::of(&ok));
    let oks: Vec<&RunResult> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    let mean_of = |f: &dyn Fn(&RunResult) -> Option<f64>| {
        let v: Vec<f64> = oks.iter().filter_map(|r| f(r)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let (floats, indices, total, identity) = if sketched && !oks.is_empty() {
        let per = oks
            .iter()
            .flat_map(|r| r.floats_per_party.iter())
            .copied()
            .max()
            .unwrap_or(0);
        let idx = oks
            .iter()
            .flat_map(|r| r.indices_per_party.iter())
            .copied()
            .max()
            .unwrap_or(0);
        let total: u64 = oks[0].floats_per_party.iter().sum();
        let holds = oks.iter().all(|r| {
            r.floats_per_party.len() == job.parties
                && r.floats_per_party.iter().all(|&f| f == t * m as u64)
                && r.indices_per_party.iter().all(|&i| i == t)
                && r.floats_per_party.iter().sum::<u64>() == job.parties as u64 * t * m as u64
        });
        (Some(per), Some(idx), Some(total), Some(holds))
    } else {
        (None, None, None, None)
    };
    let (tau, rate) = if job.alg.central() {
        (d, 1.0)
    } else {
        (job.tau, job.tau as f64 / block_size(d, job.parties) as f64)
    };
    Ok(Record {
        problem: p.name.clone(),
        panel: job.panel.to_owned(),
        algorithm: job.alg.name().to_owned(),
        accounting: job.alg.accounting().to_owned(),
        epsilon: job.alg.private().then_some(job.eps),
        delta: p.delta,
        n_eps: n as f64 * job.eps,
        n_samples: n,
        n_features: d,
        parties: if job.alg.central() { 1 } else { job.parties },
        tau,
        sampling_rate: rate,
        iterations: t,
        sketch_dim: sketched.then_some(m),
        runs: results.len(),
        excess_risk_mean: stats.map(|s| s.mean),
        excess_risk_min: stats.map(|s| s.min),
        excess_risk_max: stats.map(|s| s.max),
        excess_risk_runs: runs,
        objective_star: f_star,
        reference_gap: gap,
        reported_epsilon: mean_of(&|r| r.reported_epsilon),
        selection_noise_scale: mean_of(&|r| r.selection_scale),
        excess_risk_at_zero: p.f_zero - f_star,
        max_score_at_zero: p.max_score_zero,
        uplink_floats_per_party: floats,
        uplink_indices_per_party: indices,
        uplink_bytes_per_party: floats
            .zip(indices)
            .map(|(f, i)| f * FLOAT_BYTES + i * INDEX_BYTES),
        uplink_floats_total: total,
        unsketched_floats_per_party: sketched.then_some(t * n as u64),
        uplink_identity_holds: identity,
        seconds_per_run: mean_of(&|r| Some(r.seconds)),
        failed_runs: failed,
    })
}
