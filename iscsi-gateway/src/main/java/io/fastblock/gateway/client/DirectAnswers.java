package io.fastblock.gateway.client;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * One iSCSI event loop's writes that wait for an OK straight from their chain's tail: the loop's
 * client id, which its connections register with every storage node ({@code ANSWER_TO}), and
 * for each such write the connection to its head (where the request is pending) and to its tail
 * (where the answer comes). Confined to the loop, like its connections.
 */
final class DirectAnswers {
    record Waiting(StorageConnection head, StorageConnection tail) {
    }

    final long clientId;
    private final Map<Long, Waiting> waiting = new HashMap<>();

    DirectAnswers(long clientId) {
        if (clientId == 0) {
            throw new IllegalArgumentException("client id 0 means no client");
        }
        this.clientId = clientId;
    }

    void expect(long requestId, StorageConnection head, StorageConnection tail) {
        waiting.put(requestId, new Waiting(head, tail));
    }

    /** The request is answered (by either side) or failed: nothing more to wait for. */
    Waiting done(long requestId) {
        return waiting.isEmpty() ? null : waiting.remove(requestId);
    }

    /** Takes out every write whose direct answer would have come over {@code tail} (it closed). */
    List<Map.Entry<Long, Waiting>> lostWith(StorageConnection tail) {
        List<Map.Entry<Long, Waiting>> lost = new ArrayList<>();
        for (Iterator<Map.Entry<Long, Waiting>> it = waiting.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, Waiting> e = it.next();
            if (e.getValue().tail() == tail) {
                lost.add(Map.entry(e.getKey(), e.getValue()));
                it.remove();
            }
        }
        return lost;
    }

    int size() {
        return waiting.size();
    }
}
