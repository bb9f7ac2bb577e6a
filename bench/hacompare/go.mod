module github.com/leasehold/lease/bench/hacompare

go 1.26.0

require (
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hashicorp/raft v1.8.0
	github.com/jackc/pgx/v5 v5.12.0
	github.com/leasehold/lease v0.1.0
	github.com/leasehold/lease/bench/pgcompare v0.1.0
	github.com/leasehold/lease/replicated v0.1.0
	github.com/riverqueue/river v0.51.1
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)
