//! Every named profile generates what its paper publishes, within tolerance, and says it is
//! a stand-in.

use flashlane_core::workload::{self, Characteristics, SyntheticReader};

#[test]
fn every_profile_matches_its_published_figures() {
    let all = workload::profiles();
    assert_eq!(all.len(), 19 + 8 + 12 + 3);
    for p in &all {
        p.spec
            .validate()
            .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let mut reader = SyntheticReader::new(&p.spec).unwrap();
        let c = Characteristics::measure(&mut || reader.next_record()).unwrap();
        let want = &p.published;
        // Read share: absolute tolerance (standard error <= 0.0016 at 100k records).
        assert!(
            (c.read_fraction() - want.read_fraction).abs() < 0.006,
            "{}: read fraction {} vs {}",
            p.name,
            c.read_fraction(),
            want.read_fraction
        );
        // (The spec's own figures are built from `published`: comparing them with it would
        // check nothing. The generated records are what is measured.)
        if let Some(bytes) = want.mean_size_bytes {
            assert!(
                (c.mean_size_bytes / bytes - 1.0).abs() < 0.01,
                "{}: mean size {} vs {bytes}",
                p.name,
                c.mean_size_bytes
            );
        }
        if let Some(ns) = want.mean_interarrival_ns {
            assert!(
                (c.mean_interarrival_ns / ns - 1.0).abs() < 0.02,
                "{}: mean inter-arrival {} vs {ns}",
                p.name,
                c.mean_interarrival_ns
            );
        }
        if let Some(n) = want.requests {
            assert_eq!(c.records, n, "{}", p.name);
        }
        assert!(p
            .spec
            .label
            .starts_with(&format!("synthetic stand-in for {} matching only:", p.name)));
        assert!(p.spec.label.contains(&p.source), "{}", p.name);
    }
}

#[test]
fn venice_rows_are_copied_exactly() {
    // Spot checks against Venice Table 2 (read %, KB, us) and PIQ Table I (reads, writes).
    let hm = workload::profile("hm_0").unwrap();
    assert!(hm
        .spec
        .label
        .contains("read 36 %, mean size 8.8 KiB, mean inter-arrival 58 us"));
    let lun3 = workload::profile("LUN3").unwrap();
    assert_eq!(lun3.published.mean_interarrival_ns, Some(3_127_000.0));
    assert_eq!(lun3.published.read_fraction, 0.07);
    let ycsb = workload::profile("ycsb_b").unwrap(); // lookup ignores case
    assert_eq!(ycsb.name, "YCSB_B");
    assert_eq!(ycsb.published.mean_size_bytes, Some(65.7 * 1024.0));
    let piq = workload::profile("piq_r129066_w370933").unwrap();
    assert_eq!(piq.published.requests, Some(499_999));
    assert!(piq.spec.label.contains("129066 reads and 370933 writes"));
    assert!(piq.spec.label.contains("not published"));
}

#[test]
fn profile_names_are_unique_and_unknown_names_are_none() {
    let all = workload::profiles();
    let mut names: Vec<String> = all.iter().map(|p| p.name.to_ascii_lowercase()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), all.len());
    assert!(workload::profile("hm_9").is_none());
}

#[test]
fn profile_specs_survive_a_toml_round_trip() {
    for p in workload::profiles() {
        let text = p.spec.to_toml().unwrap();
        let back = workload::SyntheticSpec::from_toml(&text, &p.name).unwrap();
        assert_eq!(back, p.spec, "{}", p.name);
    }
}

#[test]
fn vios_table_1_rows_are_copied_exactly() {
    // VIOS Table 1: src 81377 reads / 418623 writes, mds 26301 / 473699 (500,000 each).
    let src = workload::profile("vios_src").unwrap();
    assert_eq!(src.published.requests, Some(500_000));
    assert_eq!(src.spec.requests, 500_000);
    assert!(src.spec.label.contains("81377 reads and 418623 writes"));
    assert!(src.spec.label.contains("VIOS Table 1, row src"));
    let mds = workload::profile("vios_mds").unwrap();
    assert_eq!(mds.published.read_fraction, 26_301.0 / 500_000.0);
    let count = workload::profiles()
        .iter()
        .filter(|p| p.name.starts_with("vios_"))
        .count();
    assert_eq!(count, 12);
}
