package io.fastblock.bench.initiator;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * A libiscsi-style LUN address: {@code iscsi://[user[%secret]@]host[:port]/target-iqn/lun}. The
 * user and secret, when present, are the one-way CHAP credentials.
 */
public record IscsiUrl(String host, int port, String target, int lun, String user, String secret) {
    public static final int DEFAULT_PORT = 3260;

    public IscsiUrl {
        if (lun < 0 || lun > 16383) {
            throw new IllegalArgumentException("LUN must be 0..16383, got " + lun);
        }
    }

    public static IscsiUrl parse(String url) {
        if (!url.startsWith("iscsi://")) {
            throw new IllegalArgumentException("not an iscsi:// URL: " + url);
        }
        String rest = url.substring("iscsi://".length());
        String user = null;
        String secret = null;
        int at = rest.lastIndexOf('@', rest.indexOf('/') < 0 ? rest.length() : rest.indexOf('/'));
        if (at >= 0) {
            String cred = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int pct = cred.indexOf('%');
            // as libiscsi: no escaping, the secret runs to the last '@' before the path
            user = pct < 0 ? cred : cred.substring(0, pct);
            secret = pct < 0 ? null : cred.substring(pct + 1);
            if (user.isEmpty() || secret == null || secret.isEmpty()) {
                throw new IllegalArgumentException("CHAP credentials must be user%secret in " + url);
            }
        }
        String[] parts = rest.split("/", -1);
        if (parts.length != 3 || parts[1].isEmpty() || parts[2].isEmpty()) {
            throw new IllegalArgumentException("expected iscsi://host[:port]/<target-iqn>/<lun>, got " + url);
        }
        String hostPort = parts[0];
        String host;
        int port = DEFAULT_PORT;
        try {
            URI u = new URI("x://" + hostPort);
            host = u.getHost();
            if (u.getPort() >= 0) {
                port = u.getPort();
            }
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("bad host:port '" + hostPort + "' in " + url);
        }
        if (host == null || host.isEmpty() || (hostPort.contains(":") && !hostPort.startsWith("[")
                && !hostPort.substring(hostPort.lastIndexOf(':') + 1).matches("\\d{1,5}"))) {
            throw new IllegalArgumentException("bad host:port '" + hostPort + "' in " + url);
        }
        int lun;
        try {
            lun = Integer.parseInt(parts[2]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("LUN must be a number, got '" + parts[2] + "' in " + url);
        }
        return new IscsiUrl(host, port, parts[1], lun, user, secret);
    }

    public boolean chap() {
        return user != null;
    }

    /** The URL without the secret, for reports and logs. */
    @Override
    public String toString() {
        return "iscsi://" + (user != null ? user + "@" : "") + host + ":" + port + "/" + target + "/" + lun;
    }
}
