module github.com/leasehold/lease

go 1.25.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/google/btree v1.1.3
	go.uber.org/goleak v1.3.0
)

require (
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
