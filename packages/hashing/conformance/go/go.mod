module cellfed.io/hashing-conformance

go 1.22
