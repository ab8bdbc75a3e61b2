package dev.reconcile.agent;

import dev.reconcile.core.PeerCheck;
import io.vertx.core.net.NetSocket;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * The names a peer's TLS certificate was issued to (its subject's common name and its DNS subject
 * alternative names), and the {@link PeerCheck} that holds a peer to them: with {@code
 * tls-pin-node-id} the node id a peer claims in the handshake must be one of its certificate's
 * names, so a certificate of the cluster's CA issued for node b cannot be used to speak as node a.
 */
final class CertificateNames {
  private CertificateNames() {}

  /** The names of the peer's leaf certificate; empty without TLS. */
  static List<String> of(NetSocket socket) {
    if (!socket.isSsl()) {
      return List.of();
    }
    List<Certificate> chain;
    try {
      chain = socket.peerCertificates();
    } catch (SSLPeerUnverifiedException e) {
      return List.of();
    }
    if (chain == null || chain.isEmpty() || !(chain.get(0) instanceof X509Certificate leaf)) {
      return List.of();
    }
    return names(leaf);
  }

  static List<String> names(X509Certificate leaf) {
    List<String> out = new ArrayList<>();
    try {
      for (Rdn rdn : new LdapName(leaf.getSubjectX500Principal().getName()).getRdns()) {
        if (rdn.getType().toUpperCase(Locale.ROOT).equals("CN")) {
          out.add(String.valueOf(rdn.getValue()));
        }
      }
    } catch (InvalidNameException e) {
      // no usable subject: only the alternative names count
    }
    try {
      Collection<List<?>> sans = leaf.getSubjectAlternativeNames();
      if (sans != null) {
        for (List<?> san : sans) {
          if (san.size() == 2 && Integer.valueOf(2).equals(san.get(0))) { // dNSName
            out.add(String.valueOf(san.get(1)));
          }
        }
      }
    } catch (CertificateParsingException e) {
      // as above
    }
    return out;
  }

  /** A check that the claimed node id is one of {@code names}. */
  static PeerCheck pinTo(List<String> names) {
    return claimed ->
        names.contains(claimed)
            ? null
            : "peer says it is node '"
                + dev.reconcile.core.Wire.peerText(claimed)
                + "' but its certificate was issued to "
                + names
                + " (tls-pin-node-id)";
  }
}
