package io.fastblock.gateway.iscsi.login;

import java.util.List;
import java.util.Map;

/**
 * What to put in the Login Response. {@code status} non-zero means the login failed and the
 * connection closes after the response; {@code fullFeature} means the session starts after it.
 */
public record LoginReply(int status, boolean transit, int csg, int nsg, int tsih,
                         List<Map.Entry<String, String>> keys, boolean fullFeature) {

    public static LoginReply failure(int status, int csg) {
        return new LoginReply(status, false, csg, 0, 0, List.of(), false);
    }

    public boolean failed() {
        return status != LoginStatus.SUCCESS;
    }
}
