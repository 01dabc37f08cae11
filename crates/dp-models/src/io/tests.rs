use super::*;
use crate::Design;
use proptest::prelude::*;
use std::path::PathBuf;

fn csv_err(text: &str, opts: &CsvOptions) -> String {
    match parse_csv(text.as_bytes(), opts) {
        Ok(_) => panic!("expected an error for {text:?}"),
        Err(e) => e.to_string(),
    }
}

fn svm_err(text: &str, p: Option<usize>) -> String {
    let p = p.map_or(FeatureCount::FromDataNotPrivate, FeatureCount::Public);
    match parse_libsvm(text.as_bytes(), p) {
        Ok(_) => panic!("expected an error for {text:?}"),
        Err(e) => e.to_string(),
    }
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dp-models-io-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn csv_roundtrip_with_options() {
    let text = "a;b;y\n1;2;yes\n3; 4 ;no\n";
    let opts = CsvOptions {
        target: Target::Name("y".into()),
        header: true,
        delimiter: b';',
        labels: LabelMap::Binary {
            positive: "yes".into(),
            negative: "no".into(),
        },
    };
    let d = parse_csv(text.as_bytes(), &opts).unwrap();
    assert_eq!(d.feature_names, ["a", "b"]);
    assert_eq!(d.target_name, "y");
    assert_eq!(d.dataset.y(), &[1.0, -1.0]);
    assert_eq!(d.dataset.x().row(1), &[3.0, 4.0]);

    // No header, target by index in the middle.
    let opts = CsvOptions {
        target: Target::Index(1),
        header: false,
        ..CsvOptions::default()
    };
    let d = parse_csv(b"1,10,2\n3,30,4\n", &opts).unwrap();
    assert_eq!(d.dataset.y(), &[10.0, 30.0]);
    assert_eq!(d.dataset.x().row(0), &[1.0, 2.0]);
    assert_eq!(d.feature_names, ["column1", "column3"]);
    assert_eq!(d.target_name, "column2");
}

#[test]
fn csv_errors_name_line_column_and_value() {
    let reg = CsvOptions::default();
    assert!(csv_err("", &reg).contains("empty CSV"));
    assert!(csv_err(" \n\n", &reg).contains("empty CSV"));
    assert!(csv_err("a,b\n", &reg).contains("no data rows"));
    let e = csv_err("a,b\n1,2\n3,4,5\n", &reg);
    assert_eq!(
        e,
        "line 3: ragged row with 3 field(s), expected 2 as in line 1"
    );
    let e = csv_err("a,b\n1,2\n3\n", &reg);
    assert!(e.contains("line 3") && e.contains("ragged"), "{e}");
    // The exact one-line message: line, column name and index, value.
    let e = csv_err("a,b\n1,2\nx,4\n", &reg);
    assert_eq!(e, r#"line 3, column "a" (index 0): "x" is not a number"#);
    let e = csv_err("a,b\nNaN,2\n", &reg);
    assert_eq!(
        e,
        r#"line 2, column "a" (index 0): value "NaN" is not finite (NaN or infinity)"#
    );
    let e = csv_err("a,b\n1,inf\n", &reg);
    assert_eq!(
        e,
        r#"line 2, column "b" (index 1): bad label "inf": not finite (NaN or infinity)"#
    );
    let e = csv_err("a,b\n1,2\n,3\n", &reg);
    assert_eq!(
        e,
        r#"line 3, column "a" (index 0): empty field (missing value)"#
    );
    let cls = CsvOptions::classification(Target::Last, "UP", "DOWN");
    let e = csv_err("a,b\n1,UP\n2,SIDEWAYS\n", &cls);
    assert_eq!(
        e,
        r#"line 3, column "b" (index 1): bad label "SIDEWAYS": expected "UP" (+1) or "DOWN" (-1)"#
    );
    let e = csv_err(
        "a,b\n1,2\n",
        &CsvOptions::regression(Target::Name("z".into())),
    );
    assert!(
        e.contains("\"z\" not found") && e.contains(r#"columns: "a", "b""#),
        "{e}"
    );
    let e = csv_err("a,b\n1,2\n", &CsvOptions::regression(Target::Index(2)));
    assert!(e.contains("out of range"), "{e}");
    let no_header = CsvOptions {
        header: false,
        target: Target::Name("a".into()),
        ..CsvOptions::default()
    };
    let e = csv_err("1,2\n", &no_header);
    assert!(e.contains("no header"), "{e}");
    // Without a header, the column is named by its index only.
    let e = csv_err(
        "1,2\n3,x\n",
        &CsvOptions {
            header: false,
            target: Target::Index(0),
            ..CsvOptions::default()
        },
    );
    assert_eq!(e, r#"line 2, column index 1: "x" is not a number"#);
    let e = csv_err("a\n1\n", &reg);
    assert!(e.contains("at least one feature"), "{e}");
    let e = csv_err("a,b\n1,\u{0}\u{ff}2\n", &reg);
    assert!(e.contains("line 2"), "{e}");
    let bad_utf8: &[u8] = b"a,b\n1,\xff\n";
    let err = parse_csv(bad_utf8, &reg).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"line 2, column "b" (index 1): not valid UTF-8"#
    );
    assert_eq!(err.problem(), Some(&Problem::InvalidUtf8));
}

#[test]
fn parse_errors_are_typed() {
    let err = parse_csv(b"a,b\n1,2\n7,x\n", &CsvOptions::default()).unwrap_err();
    let LoadError::Parse { at, problem } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(at.line, Some(3));
    assert_eq!(
        at.column,
        Some(Column {
            index: 1,
            name: Some("b".into())
        })
    );
    assert!(matches!(problem, Problem::BadLabel { value, .. } if value == "x"));
    // Converts into the crate's error.
    let m: crate::ModelError = err.clone().into();
    assert_eq!(m.to_string(), err.to_string());
}

#[test]
fn libsvm_parses_and_infers_width() {
    let d = parse_libsvm(
        b"+1 1:0.5 3:2 # comment\n\n-1 2:-1\n# only a comment\n",
        FeatureCount::FromDataNotPrivate,
    )
    .unwrap();
    assert_eq!(d.n_samples(), 2);
    assert_eq!(d.n_features(), 3);
    assert_eq!(d.y(), &[1.0, -1.0]);
    assert_eq!(d.x().row(0), (&[0usize, 2][..], &[0.5, 2.0][..]));
    assert_eq!(d.x().col(1), (&[1usize][..], &[-1.0][..]));
    let d = parse_libsvm(b"1 1:1\r\n0\r\n", FeatureCount::Public(5)).unwrap();
    assert_eq!((d.n_samples(), d.n_features()), (2, 5));
    assert_eq!(d.x().nnz(), 1);
    let dense = parse_libsvm_dense(b"1 1:1\r\n0 3:2\r\n", FeatureCount::Public(4)).unwrap();
    assert_eq!(dense.x().row(1), &[0.0, 0.0, 2.0, 0.0]);
}

#[test]
fn libsvm_errors_name_line_and_reason() {
    assert!(svm_err("", None).contains("empty LIBSVM"));
    assert!(svm_err("# nothing\n\n", None).contains("empty LIBSVM"));
    let e = svm_err("1 1:1\nabc 1:1\n", None);
    assert_eq!(
        e,
        r#"line 2: bad label "abc": the first field must be a number"#
    );
    let e = svm_err("1 1:1\nnan 1:1\n", None);
    assert!(e.contains("line 2") && e.contains("not finite"), "{e}");
    let e = svm_err("1 1:1\n1 2\n", None);
    assert!(e.contains("line 2") && e.contains("idx:value"), "{e}");
    let e = svm_err("1 0:1\n", None);
    assert!(e.contains("line 1") && e.contains("zero index"), "{e}");
    let e = svm_err("1 3:1 2:1\n", None);
    assert_eq!(
        e,
        r#"line 1: bad pair "2:1": index 2 is not increasing (previous index 3)"#
    );
    let e = svm_err("1 3:1 3:1\n", None);
    assert!(e.contains("not increasing"), "{e}");
    let e = svm_err("1 x:1\n", None);
    assert!(e.contains("not a positive integer"), "{e}");
    let e = svm_err("1 -2:1\n", None);
    assert!(e.contains("not a positive integer"), "{e}");
    let e = svm_err("1 1:abc\n", None);
    assert!(e.contains("\"abc\" is not a number"), "{e}");
    let e = svm_err("1\n1 1:inf\n", None);
    assert!(e.contains("line 2") && e.contains("not finite"), "{e}");
    let e = svm_err("1 1:1\n1 7:1\n", Some(5));
    assert!(
        e.contains("line 2") && e.contains("index 7 exceeds the declared n_features = 5"),
        "{e}"
    );
    let e = svm_err("1 99999999999:1\n", None);
    assert!(e.contains("supported maximum"), "{e}");
    let e = svm_err("1 1:1\n", Some(0));
    assert!(e.contains("n_features = 0"), "{e}");
    let e = svm_err("1 1:1\n", Some(MAX_LIBSVM_FEATURES + 1));
    assert!(e.contains("supported maximum"), "{e}");
    let e = svm_err("1\n-1\n", None);
    assert!(e.contains("no feature appears"), "{e}");
    let e = parse_libsvm(b"1 1:1\n1 1:\xff\n", FeatureCount::FromDataNotPrivate)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "line 2: not valid UTF-8");
}

#[test]
fn file_loaders_name_the_file_line_column_and_value() {
    let dir = scratch("files");
    let csv_path = dir.join("toy.csv");
    std::fs::write(&csv_path, "f,y\n1,2\n3,4\n").unwrap();
    let d = load_csv_data(&csv_path, &CsvOptions::default()).unwrap();
    assert_eq!(d.dataset.y(), &[2.0, 4.0]);
    assert_eq!(d.feature_names, ["f"]);
    std::fs::write(&csv_path, "f,y\n1,2\n3,4\n5e,6\n").unwrap();
    let e = load_csv(&csv_path, &CsvOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            r#"{}, line 4, column "f" (index 0): "5e" is not a number"#,
            csv_path.display()
        )
    );
    assert_eq!(
        e.location().unwrap().file.as_deref(),
        Some(csv_path.as_path())
    );
    let svm_path = dir.join("toy.svm");
    std::fs::write(&svm_path, "1 2:3\n").unwrap();
    let d = load_libsvm(&svm_path, FeatureCount::FromDataNotPrivate).unwrap();
    assert_eq!(d.n_features(), 2);
    let e = load_csv(dir.join("missing.csv"), &CsvOptions::default()).unwrap_err();
    assert!(matches!(&e, LoadError::Read { kind, .. } if *kind == std::io::ErrorKind::NotFound));
    assert!(e.to_string().contains("missing.csv"), "{e}");
    std::fs::write(&svm_path, "1 2:3\n1 1:x\n").unwrap();
    let e = load_libsvm(&svm_path, FeatureCount::FromDataNotPrivate)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&svm_path.display().to_string())
            && e.contains("line 2")
            && e.contains("\"x\""),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn prediction_csv_reorders_columns_and_finds_labels() {
    let features = names(&["a", "b", "c"]);
    let (x, y) = parse_csv_for_prediction(
        b"c, a ,label,b\n3,1,yes,2\n6,4,no,5\n",
        &features,
        Some("label"),
        &LabelMap::from_pair(Some(("yes".into(), "no".into()))),
    )
    .unwrap();
    assert_eq!(x.row(0), &[1.0, 2.0, 3.0]);
    assert_eq!(x.row(1), &[4.0, 5.0, 6.0]);
    assert_eq!(y, Some(vec![1.0, -1.0]));
    // No label column: no labels, even when a target is named.
    let (x, y) = parse_csv_for_prediction(
        b"a,b,c\n1,2,3\n",
        &features,
        Some("label"),
        &LabelMap::Numeric,
    )
    .unwrap();
    assert_eq!((x.n_samples(), x.n_features(), y), (1, 3, None));
    let (_, y) =
        parse_csv_for_prediction(b"a,b,c\n1,2,3\n", &features, None, &LabelMap::Numeric).unwrap();
    assert_eq!(y, None);
}

#[test]
fn prediction_csv_errors_name_missing_and_extra_columns() {
    let features = names(&["a", "b", "c"]);
    let err = |text: &str, target: Option<&str>| {
        parse_csv_for_prediction(text.as_bytes(), &features, target, &LabelMap::Numeric)
            .unwrap_err()
            .to_string()
    };
    let e = err("a,c\n1,3\n", None);
    assert_eq!(
        e,
        r#"line 1: missing feature column(s) "b": the model needs the columns "a", "b", "c""#
    );
    let e = err("a,b,c,d,e\n1,2,3,4,5\n", Some("y"));
    assert_eq!(
        e,
        r#"line 1: unexpected column(s) "d", "e": the model's feature columns are "a", "b", "c" and the target column is "y""#
    );
    let e = err("a,b,c,a\n1,2,3,4\n", None);
    assert!(
        e.contains(r#"column name "a" appears more than once"#) && e.contains("index 3"),
        "{e}"
    );
    let e = err("a,b,c\n1,2,3\n1,x,3\n", None);
    assert_eq!(e, r#"line 3, column "b" (index 1): "x" is not a number"#);
    let e = err("a,b,c,y\n1,2,3,up\n", Some("y"));
    assert!(e.contains(r#"column "y" (index 3): bad label "up""#), "{e}");
    let e = err("a,b,c\n1,2\n", None);
    assert!(e.contains("line 2: ragged"), "{e}");
    let e = err("a,b,c\n", None);
    assert!(e.contains("no data rows"), "{e}");
    let e = err("a,b,c\n1,2,3\n", Some("b"));
    assert!(e.contains("target") && e.contains("feature column"), "{e}");
    let e = parse_csv_for_prediction(b"a\n1\n", &[], None, &LabelMap::Numeric).unwrap_err();
    assert!(e.to_string().contains("feature_names"), "{e}");
    // From a file: the file is named.
    let dir = scratch("predict");
    let path = dir.join("new.csv");
    std::fs::write(&path, "a,b\n1,2\n").unwrap();
    let e = read_csv_for_prediction(&path, &features, None, &LabelMap::Numeric)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&path.display().to_string()) && e.contains("\"c\""),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn format_dispatch_and_unknown_extensions() {
    assert_eq!(Format::from_path("a/b.CSV").unwrap(), Format::Csv);
    assert_eq!(Format::from_path("b.tsv").unwrap(), Format::Tsv);
    assert_eq!(Format::from_path("b.svm").unwrap(), Format::Libsvm);
    assert_eq!(Format::from_name(" LibSVM ").unwrap(), Format::Libsvm);
    let e = Format::from_path("x.parquet").unwrap_err().to_string();
    assert!(
        e.contains("unknown file extension .parquet") && e.contains(".csv"),
        "{e}"
    );
    let e = Format::from_path("heart_scale").unwrap_err().to_string();
    assert!(e.contains("no extension"), "{e}");
    let e = Format::from_name("arff").unwrap_err().to_string();
    assert!(e.contains("unknown data format"), "{e}");

    let dir = scratch("format");
    std::fs::write(dir.join("t.tsv"), "a\ty\n1\t2\n").unwrap();
    std::fs::write(dir.join("t.svm"), "1 3:1\n").unwrap();
    std::fs::write(dir.join("t.xyz"), "1 3:1\n").unwrap();
    match load(
        dir.join("t.tsv"),
        None,
        &CsvOptions::default(),
        FeatureCount::FromDataNotPrivate,
    )
    .unwrap()
    {
        Loaded::Dense(d) => assert_eq!(d.y(), &[2.0]),
        Loaded::Sparse(_) => panic!("expected dense"),
    }
    match load(
        dir.join("t.svm"),
        None,
        &CsvOptions::default(),
        FeatureCount::Public(4),
    )
    .unwrap()
    {
        Loaded::Sparse(d) => assert_eq!(d.n_features(), 4),
        Loaded::Dense(_) => panic!("expected sparse"),
    }
    let e = load(
        dir.join("t.xyz"),
        None,
        &CsvOptions::default(),
        FeatureCount::FromDataNotPrivate,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown file extension"), "{e}");
    assert!(matches!(
        load(
            dir.join("t.xyz"),
            Some(Format::Libsvm),
            &CsvOptions::default(),
            FeatureCount::FromDataNotPrivate
        )
        .unwrap(),
        Loaded::Sparse(_)
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A gzip-compressed file loads as its text: `.csv.gz` and `.svm.gz` by name, a
/// LIBSVM file without an inner extension with its format named, several gzip members
/// one after the other as their concatenation; a file that starts as gzip but is cut
/// short is an error that says so.
#[test]
fn gzip_files_load_as_their_text() {
    assert_eq!(Format::from_path("d/phishing.csv.gz").unwrap(), Format::Csv);
    assert_eq!(Format::from_path("A.SVM.GZ").unwrap(), Format::Libsvm);
    assert_eq!(Format::from_path("t.tsv.gz").unwrap(), Format::Tsv);
    let e = Format::from_path("heart_scale.gz").unwrap_err().to_string();
    assert!(
        e.contains("unknown file extension .gz") && e.contains("followed by .gz"),
        "{e}"
    );

    let dir = scratch("gzip");
    let csv = "a,b,y\n1,2,0\n3,4.5,1\n-1,0,1\n";
    std::fs::write(dir.join("t.csv"), csv).unwrap();
    std::fs::write(dir.join("t.csv.gz"), gzip(csv.as_bytes())).unwrap();
    let opts = CsvOptions::default();
    let dense = |name: &str| match load(
        dir.join(name),
        None,
        &opts,
        FeatureCount::FromDataNotPrivate,
    )
    .unwrap()
    {
        Loaded::Dense(d) => d,
        Loaded::Sparse(_) => panic!("expected dense"),
    };
    let (plain, packed) = (dense("t.csv"), dense("t.csv.gz"));
    assert_eq!(plain.y(), packed.y());
    assert_eq!(plain.x(), packed.x());
    // Two members: the rows of both.
    let (head, tail) = csv.split_at(csv.find("3,4.5").unwrap());
    let mut two = gzip(head.as_bytes());
    two.extend(gzip(tail.as_bytes()));
    std::fs::write(dir.join("two.csv.gz"), two).unwrap();
    assert_eq!(dense("two.csv.gz").x(), plain.x());

    let svm = "1 1:0.5 3:1\n-1 2:2\n";
    std::fs::write(dir.join("heart"), svm).unwrap();
    std::fs::write(dir.join("heart.gz"), gzip(svm.as_bytes())).unwrap();
    let sparse = |name: &str| match load(
        dir.join(name),
        Some(Format::Libsvm),
        &opts,
        FeatureCount::Public(3),
    )
    .unwrap()
    {
        Loaded::Sparse(d) => d,
        Loaded::Dense(_) => panic!("expected sparse"),
    };
    assert_eq!(sparse("heart").y(), sparse("heart.gz").y());
    assert_eq!(sparse("heart").x().nnz(), sparse("heart.gz").x().nnz());

    let mut cut = gzip(csv.as_bytes());
    cut.truncate(cut.len() / 2);
    std::fs::write(dir.join("cut.csv.gz"), cut).unwrap();
    let e = load(
        dir.join("cut.csv.gz"),
        None,
        &opts,
        FeatureCount::FromDataNotPrivate,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("cut.csv.gz") && e.contains("does not decompress"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn loaders_never_panic_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse_csv(&bytes, &CsvOptions::default());
        let _ = parse_csv(&bytes, &CsvOptions { header: false, ..CsvOptions::default() });
        let _ = parse_libsvm(&bytes, FeatureCount::FromDataNotPrivate);
        let _ = parse_libsvm(&bytes, FeatureCount::Public(3));
        let _ = parse_csv_for_prediction(&bytes, &["a".to_string()], Some("y"), &LabelMap::Numeric);
    }

    #[test]
    fn loaders_never_panic_on_near_valid_text(
        text in "[0-9:,. \\-+#\nNaifxy]{0,120}"
    ) {
        let _ = parse_csv(text.as_bytes(), &CsvOptions::default());
        let _ = parse_csv(text.as_bytes(), &CsvOptions::classification(Target::Index(0), "1", "0"));
        let _ = parse_libsvm(text.as_bytes(), FeatureCount::FromDataNotPrivate);
        let _ = parse_libsvm(text.as_bytes(), FeatureCount::Public(4));
        let _ = parse_libsvm_dense(text.as_bytes(), FeatureCount::Public(4));
        let _ = parse_csv_for_prediction(text.as_bytes(), &["a".to_string(), "1".to_string()], Some("y"), &LabelMap::Numeric);
    }

    /// Every error is one line.
    #[test]
    fn errors_are_one_line(text in "[0-9:,. \\-+#\nNaifxy]{0,60}") {
        if let Err(e) = parse_csv(text.as_bytes(), &CsvOptions::default()) {
            prop_assert_eq!(e.to_string().lines().count(), 1);
        }
        if let Err(e) = parse_libsvm(text.as_bytes(), FeatureCount::FromDataNotPrivate) {
            prop_assert_eq!(e.to_string().lines().count(), 1);
        }
    }
}

/// CRLF line ends and blank lines do not shift the line an error names (issue 25:
/// CRLF files got line numbers one too low).
#[test]
fn csv_error_lines_are_right_with_crlf_and_blank_lines() {
    let opts = CsvOptions::default();
    for text in ["a,y\n1,1\n2,2\nx,3\n", "a,y\r\n1,1\r\n2,2\r\nx,3\r\n"] {
        let e = csv_err(text, &opts);
        assert!(e.starts_with("line 4, "), "{text:?}: {e}");
    }
    let e = csv_err("a,y\r\n1,1\r\n\r\n2,2\r\nx,3\r\n", &opts);
    assert!(e.starts_with("line 5, "), "{e}");
    let e = csv_err("a,y\n1,1\n\n2,2\nx,3\n", &opts);
    assert!(e.starts_with("line 5, "), "{e}");
    for pred in [
        "a,y\r\n1,1\r\nx,3\r\n".as_bytes(),
        "a,y\n1,1\nx,3\n".as_bytes(),
    ] {
        let e = parse_csv_for_prediction(pred, &["a".to_string()], Some("y"), &LabelMap::Numeric)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 3, "), "{e}");
    }
}
