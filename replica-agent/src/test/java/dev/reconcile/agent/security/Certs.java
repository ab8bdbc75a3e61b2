package dev.reconcile.agent.security;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Test certificates made at test time with BouncyCastle: a CA, node certificates it signs (for
 * 127.0.0.1 and localhost, usable as TLS server and client) and self-signed ones, written as PEM
 * (certificate, PKCS#8 key) into a directory. EC P-256 keys, valid from an hour ago for a day.
 */
final class Certs {
  private static final AtomicLong SERIAL = new AtomicLong(System.nanoTime());

  /** A certificate with its key, and the PEM files written for it. */
  record Issued(String name, X509Certificate cert, KeyPair keys, Path certPem, Path keyPem) {}

  private Certs() {}

  static Issued ca(Path dir, String name) throws Exception {
    KeyPair k = keys();
    X500Name subject = new X500Name("CN=" + name);
    X509v3CertificateBuilder b = builder(subject, subject, k);
    b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
    b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    return write(dir, name, sign(b, k), k);
  }

  /** A node certificate signed by {@code ca}, for 127.0.0.1 and localhost. */
  static Issued node(Path dir, Issued ca, String name) throws Exception {
    return node(
        dir,
        ca,
        name,
        new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
        new GeneralName(GeneralName.dNSName, "localhost"));
  }

  /** A node certificate signed by {@code ca} with the given subject alternative names. */
  static Issued node(Path dir, Issued ca, String name, GeneralName... sans) throws Exception {
    KeyPair k = keys();
    X509v3CertificateBuilder b =
        builder(new X500Name("CN=" + ca.name()), new X500Name("CN=" + name), k);
    nodeExtensions(b, sans);
    return write(dir, name, sign(b, ca.keys()), k);
  }

  /** A self-signed node certificate (it is its own CA). */
  static Issued selfSigned(Path dir, String name) throws Exception {
    KeyPair k = keys();
    X500Name subject = new X500Name("CN=" + name);
    X509v3CertificateBuilder b = builder(subject, subject, k);
    nodeExtensions(
        b,
        new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
        new GeneralName(GeneralName.dNSName, "localhost"));
    return write(dir, name, sign(b, k), k);
  }

  /** An SSL context trusting {@code ca} and, when {@code client} is given, presenting it. */
  static SSLContext context(Issued ca, Issued client) throws GeneralSecurityException, IOException {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca.cert());
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (client != null) {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry(
          "me",
          client.keys().getPrivate(),
          new char[0],
          new java.security.cert.Certificate[] {client.cert()});
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, new char[0]);
    }
    SSLContext c = SSLContext.getInstance("TLS");
    c.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return c;
  }

  private static void nodeExtensions(X509v3CertificateBuilder b, GeneralName... sans)
      throws IOException {
    b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
    b.addExtension(
        Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
    b.addExtension(
        Extension.extendedKeyUsage,
        false,
        new ExtendedKeyUsage(
            new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
    b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans));
  }

  private static KeyPair keys() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    return g.generateKeyPair();
  }

  private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair k) {
    Instant now = Instant.now();
    return new JcaX509v3CertificateBuilder(
        issuer,
        BigInteger.valueOf(SERIAL.incrementAndGet()),
        Date.from(now.minus(Duration.ofHours(1))),
        Date.from(now.plus(Duration.ofDays(1))),
        subject,
        k.getPublic());
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer)
      throws OperatorCreationException, GeneralSecurityException {
    return new JcaX509CertificateConverter()
        .getCertificate(
            b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
  }

  private static Issued write(Path dir, String name, X509Certificate cert, KeyPair k)
      throws IOException {
    Files.createDirectories(dir);
    Path c = dir.resolve(name + ".crt");
    Path key = dir.resolve(name + ".key");
    Files.writeString(c, pem(cert));
    Files.writeString(key, pem(new JcaPKCS8Generator(k.getPrivate(), null)));
    return new Issued(name, cert, k, c, key);
  }

  private static String pem(Object o) throws IOException {
    StringWriter s = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(s)) {
      w.writeObject(o);
    }
    return s.toString();
  }
}
