package replicated

// validateSecurity checks the transport's security settings: the node's own
// transport needs TLS or an explicit Insecure, and a caller's Transport
// neither.
func validateSecurity(cfg *Config) error {
	if cfg.Transport != nil {
		switch {
		case cfg.TLS != nil:
			return invalid("TLS", "must be nil when Transport is set: the caller's transport carries its own security")
		case cfg.Insecure:
			return invalid("Insecure", "must be false when Transport is set: the caller's transport carries its own security")
		}
		return nil
	}
	c := cfg.TLS
	switch {
	case c == nil && !cfg.Insecure:
		return invalid("TLS", "must be set, or Insecure true for plain TCP that anyone who can reach Bind can join")
	case c == nil:
		return nil
	case cfg.Insecure:
		return invalid("Insecure", "must be false when TLS is set")
	case c.InsecureSkipVerify:
		return invalid("TLS.InsecureSkipVerify", "must be false: a peer's certificate must be verified")
	case len(c.Certificates) == 0 && c.GetCertificate == nil && c.GetConfigForClient == nil:
		return invalid("TLS.Certificates", "the node needs its certificate: Certificates, GetCertificate or GetConfigForClient")
	case len(c.Certificates) == 0 && c.GetClientCertificate == nil:
		return invalid("TLS.GetClientCertificate", "the node presents its certificate when it dials: Certificates or GetClientCertificate")
	case c.RootCAs == nil && c.ClientCAs == nil && c.GetConfigForClient == nil:
		return invalid("TLS.RootCAs", "must hold the cluster's CA, which verifies every peer")
	}
	return nil
}
