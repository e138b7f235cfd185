package io.fastblock.storage.chain;

import io.fastblock.protocol.meta.MetaJson;
import java.io.Closeable;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JSON records under one ZooKeeper parent, kept current by a {@link CuratorCache}, with a direct
 * read for misses and suspected staleness. Each entry remembers its znode version so a slow
 * cache event never replaces a newer direct read.
 */
final class ZkRecordCache<T> implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(ZkRecordCache.class);

    private record Versioned<T>(int version, T record) {
    }

    private final CuratorFramework zk;
    private final String parent;
    private final Class<T> type;
    private final Executor blocking;
    private final CuratorCache cache;
    private final Map<String, Versioned<T>> entries = new ConcurrentHashMap<>();
    private final java.util.List<java.util.function.Consumer<T>> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    ZkRecordCache(CuratorFramework zk, String parent, Class<T> type, Executor blocking) {
        this.zk = zk;
        this.parent = parent;
        this.type = type;
        this.blocking = blocking;
        this.cache = CuratorCache.build(zk, parent);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((old, node) -> accept(node))
                .forDeletes(old -> {
                    String child = childOf(old.getPath());
                    if (child != null) {
                        entries.remove(child);
                    }
                })
                .build());
    }

    void start() {
        cache.start();
    }

    private String childOf(String path) {
        if (path.length() <= parent.length() + 1 || !path.startsWith(parent + "/")) {
            return null;
        }
        String child = path.substring(parent.length() + 1);
        return child.contains("/") ? null : child;
    }

    private void accept(ChildData node) {
        String child = childOf(node.getPath());
        if (child == null || node.getData() == null) {
            return;
        }
        try {
            put(child, node.getStat().getVersion(), MetaJson.read(node.getData(), type));
        } catch (RuntimeException e) {
            LOG.warn("ignoring unreadable {} at {}: {}", type.getSimpleName(), node.getPath(), e.getMessage());
        }
    }

    private void put(String child, int version, T record) {
        Versioned<T> now = entries.merge(child, new Versioned<>(version, record), (a, b) -> b.version >= a.version ? b : a);
        if (now.record == record) {
            for (java.util.function.Consumer<T> l : listeners) {
                try {
                    l.accept(record);
                } catch (RuntimeException e) {
                    LOG.warn("listener of {} failed: {}", parent, e.toString());
                }
            }
        }
    }

    /** Called with every record that becomes the newest known for its znode (from the cache or a direct read). */
    void listen(java.util.function.Consumer<T> listener) {
        listeners.add(listener);
    }

    /** The znode version of the newest record known for {@code child}, or -1 if none is known. */
    int versionOf(String child) {
        Versioned<T> v = entries.get(child);
        return v == null ? -1 : v.version;
    }

    T cached(String child) {
        Versioned<T> v = entries.get(child);
        return v == null ? null : v.record;
    }

    /** Reads the znode directly (off the caller's thread); completes with null if it does not exist. */
    CompletableFuture<T> fetch(String child) {
        return CompletableFuture.supplyAsync(() -> {
            String path = parent + "/" + child;
            try {
                Stat stat = new Stat();
                byte[] data = zk.getData().storingStatIn(stat).forPath(path);
                T record = MetaJson.read(data, type);
                put(child, stat.getVersion(), record);
                return cached(child);
            } catch (KeeperException.NoNodeException e) {
                entries.remove(child);
                return null;
            } catch (Exception e) {
                throw new IllegalStateException("cannot read " + path + " from ZooKeeper: " + e.getMessage(), e);
            }
        }, blocking);
    }

    @Override
    public void close() {
        cache.close();
    }
}
