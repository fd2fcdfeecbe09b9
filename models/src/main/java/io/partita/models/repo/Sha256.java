package io.partita.models.repo;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/** SHA-256 digests as 64 lowercase hex characters, the form manifests and catalog records use. */
public final class Sha256 {

  private static final Pattern FORMAT = Pattern.compile("[0-9a-f]{64}");

  private Sha256() {}

  /** Digest of a file's content, streamed (the file may be large). */
  public static String of(Path file) throws IOException {
    MessageDigest md = digest();
    byte[] buf = new byte[1 << 16];
    try (InputStream in = Files.newInputStream(file)) {
      int n;
      while ((n = in.read(buf)) > 0) {
        md.update(buf, 0, n);
      }
    }
    return HexFormat.of().formatHex(md.digest());
  }

  public static String of(byte[] bytes) {
    return HexFormat.of().formatHex(digest().digest(bytes));
  }

  /** Whether {@code s} is 64 lowercase hex characters. */
  public static boolean isValid(String s) {
    return s != null && FORMAT.matcher(s).matches();
  }

  private static MessageDigest digest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform must provide SHA-256", e);
    }
  }
}
