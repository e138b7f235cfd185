package io.fastblock.namenode.layers;

import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.protocol.client.BlockingStorageClient;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.VolumeFences;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends FENCE (seal = Long.MAX_VALUE) for a layer to every live storage server at once and waits
 * for every OK. A server answers only after every write it admitted for the layer has completed,
 * so once all answered, no write to the layer can be acknowledged any more. Servers that are down
 * load the seal from ZooKeeper when they come back.
 */
public final class StorageFences implements LayerSealer, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StorageFences.class);
    private final NodeStore nodes;
    private final Duration timeout;
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "layer-fence");
        t.setDaemon(true);
        return t;
    });

    public StorageFences(NodeStore nodes, Duration timeout) {
        this.nodes = nodes;
        this.timeout = timeout;
    }

    @Override
    public void seal(long layer) {
        fence(layer, VolumeFences.SEALED);
    }

    /** Raises {@code layer}'s epoch floor on every live server; throws if one did not confirm. */
    public void fence(long layer, long epoch) {
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (NodeStore.NodeState n : nodes.all().values()) {
            if (!n.live()) {
                continue;
            }
            NodeRecord r = n.record();
            answers.add(CompletableFuture.supplyAsync(() -> {
                try (BlockingStorageClient c = new BlockingStorageClient(r.host(), r.port(), timeout)) {
                    c.fence(layer, epoch);
                    return null;
                } catch (IOException | RuntimeException e) {
                    return r.id() + " (" + r.host() + ":" + r.port() + "): " + e.getMessage();
                }
            }, pool));
        }
        List<String> failed = new ArrayList<>();
        for (CompletableFuture<String> a : answers) {
            String f = a.join();
            if (f != null) {
                failed.add(f);
            }
        }
        if (!failed.isEmpty()) {
            LOG.warn("fence of layer {} at {} not confirmed by {}", layer, epoch, failed);
            throw new SealIncompleteException("layer " + layer + " is sealed in ZooKeeper but not confirmed by "
                    + String.join("; ", failed));
        }
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
