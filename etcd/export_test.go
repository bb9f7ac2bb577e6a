package etcd

// ServerEndpoint returns the client URL of the etcd server the tests run, for
// the examples, which live in package etcd_test.
func ServerEndpoint() string { return testEndpoint }
