"""160,000 x 50 logistic regression: dp_erm DPLogisticRegression (eps 1) against
scikit-learn's non-private LogisticRegression, side by side in one run.

    python benches/peers/python_speed.py
"""
import time, sys, numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from python_estimators import synthetic, minmax
from sklearn.linear_model import LogisticRegression
from dp_erm import DPLogisticRegression
Xtr, Xte, ytr, yte, b = synthetic()
for rep in range(2):
    t=time.perf_counter(); m=DPLogisticRegression(epsilon=1.0,bounds_X=b,random_state=rep).fit(Xtr,ytr); t1=time.perf_counter()-t
    t=time.perf_counter(); s=LogisticRegression().fit(Xtr,ytr); t2=time.perf_counter()-t
    print(f"rep {rep}: dp_erm {t1:.3f} s acc {m.score(Xte,yte):.3f} passes {m.hyperparameters_['passes']} | sklearn {t2:.3f} s acc {s.score(Xte,yte):.3f} | ratio {t1/t2:.2f}")
