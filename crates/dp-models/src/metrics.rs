//! Scores of predictions against labels: accuracy, log-loss, mean squared error.
//!
//! Every function checks its input instead of panicking: the two slices must have the
//! same, non-zero length and hold finite values, else a [`ModelError`] names the
//! problem (and, for a bad value, which slice and which position).
//!
//! # Privacy
//!
//! A score computed on private rows is a statistic of those rows, released without
//! privacy: it is not covered by the guarantee of the model it scores.

use crate::error::{ModelError, Result};

/// Checks lengths and finiteness of the pair.
fn check(y: &[f64], other: &[f64], other_name: &'static str) -> Result<()> {
    if y.len() != other.len() {
        return Err(ModelError::Shape(format!(
            "{} labels but {} {other_name}",
            y.len(),
            other.len()
        )));
    }
    if y.is_empty() {
        return Err(ModelError::Empty(format!(
            "no labels and no {other_name}: a score needs at least one sample"
        )));
    }
    for (what, v) in [("labels", y), (other_name, other)] {
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(ModelError::NonFinite {
                what,
                location: format!("sample {i}"),
                value: v[i],
            });
        }
    }
    Ok(())
}

/// Fraction of samples whose predicted label equals the label (exact comparison, so
/// use it with class labels such as -1 / +1).
///
/// ```
/// use dp_models::metrics::accuracy;
/// assert_eq!(accuracy(&[1.0, -1.0, 1.0, 1.0], &[1.0, -1.0, -1.0, 1.0])?, 0.75);
/// assert!(accuracy(&[1.0], &[1.0, 1.0]).is_err());
/// # Ok::<(), dp_models::ModelError>(())
/// ```
pub fn accuracy(y: &[f64], predicted_labels: &[f64]) -> Result<f64> {
    check(y, predicted_labels, "predicted labels")?;
    let hits = y
        .iter()
        .zip(predicted_labels)
        .filter(|(a, b)| a == b)
        .count();
    Ok(hits as f64 / y.len() as f64)
}

/// Probabilities are clamped to `[LOG_LOSS_EPS, 1 - LOG_LOSS_EPS]` before the log, so
/// that a confident wrong prediction costs at most `-ln(1e-15) ~ 34.5` instead of
/// infinity (the convention of scikit-learn's `log_loss`).
pub const LOG_LOSS_EPS: f64 = 1e-15;

/// Mean negative log-likelihood of labels `y` in {-1, +1} under predicted
/// probabilities `p_i = P(y_i = +1)`:
/// `-(1/n) sum_i [y_i = +1] ln p_i + [y_i = -1] ln(1 - p_i)`, with each `p_i` first
/// clamped to `[LOG_LOSS_EPS, 1 - LOG_LOSS_EPS]` (see [`LOG_LOSS_EPS`]).
///
/// Errors: a label other than -1 / +1, a probability outside `[0, 1]`, and the checks of
/// the module docs.
///
/// ```
/// use dp_models::metrics::log_loss;
/// let l = log_loss(&[1.0, -1.0], &[0.8, 0.4])?;
/// assert!((l - -(0.8f64.ln() + 0.6f64.ln()) / 2.0).abs() < 1e-15);
/// // A certain, wrong prediction is clamped, not infinite.
/// assert!((log_loss(&[1.0], &[0.0])? - 34.538776394910684).abs() < 1e-9);
/// # Ok::<(), dp_models::ModelError>(())
/// ```
pub fn log_loss(y: &[f64], p: &[f64]) -> Result<f64> {
    check(y, p, "probabilities")?;
    if let Some(&bad) = y.iter().find(|&&v| v != 1.0 && v != -1.0) {
        return Err(ModelError::InvalidParameter {
            name: "label",
            value: bad,
            expected: "log_loss needs labels -1 or +1",
        });
    }
    if let Some(&bad) = p.iter().find(|&&v| !(0.0..=1.0).contains(&v)) {
        return Err(ModelError::InvalidParameter {
            name: "probability",
            value: bad,
            expected: "probabilities must lie in [0, 1]",
        });
    }
    let total: f64 = y
        .iter()
        .zip(p)
        .map(|(&yi, &pi)| {
            let pi = pi.clamp(LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS);
            if yi == 1.0 {
                -pi.ln()
            } else {
                -(1.0 - pi).ln()
            }
        })
        .sum();
    Ok(total / y.len() as f64)
}

/// `(1/n) sum_i (z_i - y_i)^2`.
///
/// ```
/// use dp_models::metrics::mean_squared_error;
/// assert_eq!(mean_squared_error(&[1.0, 2.0], &[1.0, 4.0])?, 2.0);
/// assert!(mean_squared_error(&[], &[]).is_err());
/// # Ok::<(), dp_models::ModelError>(())
/// ```
pub fn mean_squared_error(y: &[f64], z: &[f64]) -> Result<f64> {
    check(y, z, "predictions")?;
    Ok(y.iter().zip(z).map(|(a, b)| (b - a) * (b - a)).sum::<f64>() / y.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_by_hand() {
        assert_eq!(
            accuracy(&[1.0, 1.0, -1.0], &[1.0, -1.0, -1.0]).unwrap(),
            2.0 / 3.0
        );
        assert_eq!(accuracy(&[1.0], &[-1.0]).unwrap(), 0.0);
        assert_eq!(
            mean_squared_error(&[0.0, 0.0, 3.0], &[1.0, -1.0, 0.0]).unwrap(),
            11.0 / 3.0
        );
        let l = log_loss(&[1.0, -1.0, 1.0], &[0.5, 0.5, 0.5]).unwrap();
        assert!((l - std::f64::consts::LN_2).abs() < 1e-15, "{l}");
        // Clamping at both ends, stated bound (1 - (1 - eps) rounds to 9.992e-16).
        let worst = -LOG_LOSS_EPS.ln();
        assert!((log_loss(&[1.0], &[0.0]).unwrap() - worst).abs() < 1e-12);
        assert!((log_loss(&[-1.0], &[1.0]).unwrap() - worst).abs() < 1e-3);
        assert_eq!(
            log_loss(&[1.0], &[1.0]).unwrap(),
            -(1.0 - LOG_LOSS_EPS).ln()
        );
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        type Metric = fn(&[f64], &[f64]) -> Result<f64>;
        let metrics: [(&str, Metric); 3] = [
            ("accuracy", accuracy),
            ("log_loss", log_loss),
            ("mse", mean_squared_error),
        ];
        for (name, m) in metrics {
            let e = m(&[1.0, -1.0], &[1.0]).unwrap_err();
            assert!(matches!(e, ModelError::Shape(_)), "{name}: {e}");
            assert!(e.to_string().contains("2 labels"), "{name}: {e}");
            assert!(matches!(m(&[], &[]), Err(ModelError::Empty(_))), "{name}");
            let e = m(&[1.0, f64::NAN], &[1.0, 1.0]).unwrap_err();
            assert!(e.to_string().contains("labels at sample 1"), "{name}: {e}");
            let e = m(&[1.0, 1.0], &[0.5, f64::INFINITY]).unwrap_err();
            assert!(e.to_string().contains("sample 1: inf"), "{name}: {e}");
        }
        let e = log_loss(&[0.0], &[0.5]).unwrap_err();
        assert!(e.to_string().contains("-1 or +1"), "{e}");
        let e = log_loss(&[1.0], &[1.5]).unwrap_err();
        assert!(e.to_string().contains("[0, 1]"), "{e}");
    }
}
