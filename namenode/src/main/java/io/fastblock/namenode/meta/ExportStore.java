package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.ExportRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * Exports of a volume, one znode per initiator under {@code /fastblock/volumes/{name}/exports}.
 * Living under the volume, they go when the volume is deleted.
 */
public final class ExportStore {
    private final CuratorFramework zk;

    public ExportStore(CuratorFramework zk) {
        this.zk = zk;
    }

    /** The export as stored and whether this call stored it (false: one for this initiator existed). */
    public record Put(ExportRecord export, boolean created) {
    }

    /**
     * Stores {@code export} unless the volume already has one for its initiator, in which case that
     * one is returned unchanged: one initiator, one set of credentials.
     *
     * @throws VolumeNotFoundException if the volume does not exist
     */
    public Put putIfAbsent(ExportRecord export) {
        String path = ZkPaths.export(export.volume(), export.initiator());
        String what = "export " + export.volume() + " to " + export.initiator();
        while (true) {
            Optional<ExportRecord> existing = get(export.volume(), export.initiator());
            if (existing.isPresent()) {
                return new Put(existing.get(), false);
            }
            ensureParent(export.volume());
            try {
                ZkCalls.run(what, () -> zk.create().forPath(path, MetaJson.write(export)));
                return new Put(export, true);
            } catch (KeeperException.NodeExistsException e) {
                // a concurrent export of the same initiator won: return theirs
            } catch (KeeperException.NoNodeException e) {
                throw new VolumeNotFoundException(export.volume());
            } catch (KeeperException e) {
                throw ZkCalls.unexpected(what, e);
            }
        }
    }

    /** Volumes created before exports existed have no exports parent; it is made only under an existing volume. */
    private void ensureParent(String volume) {
        try {
            ZkCalls.run("create exports of " + volume, () -> zk.create().forPath(ZkPaths.exports(volume)));
        } catch (KeeperException.NodeExistsException e) {
            // the usual case
        } catch (KeeperException.NoNodeException e) {
            throw new VolumeNotFoundException(volume);
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("create exports of " + volume, e);
        }
    }

    public Optional<ExportRecord> get(String volume, String initiator) {
        try {
            byte[] raw = ZkCalls.run("read export", () -> zk.getData().forPath(ZkPaths.export(volume, initiator)));
            return Optional.of(MetaJson.read(raw, ExportRecord.class));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read export of " + volume, e);
        }
    }

    /** The volume's exports by initiator (empty for a volume that does not exist). */
    public List<ExportRecord> list(String volume) {
        List<String> children;
        try {
            children = ZkCalls.run("list exports", () -> zk.getChildren().forPath(ZkPaths.exports(volume)));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list exports of " + volume, e);
        }
        List<ExportRecord> out = new ArrayList<>();
        for (String child : children) {
            get(volume, ZkPaths.initiatorOf(child)).ifPresent(out::add);
        }
        out.sort(Comparator.comparing(ExportRecord::initiator));
        return out;
    }

    /** Removes the export; false if there was none. */
    public boolean delete(String volume, String initiator) {
        try {
            ZkCalls.run("delete export", () -> zk.delete().forPath(ZkPaths.export(volume, initiator)));
            return true;
        } catch (KeeperException.NoNodeException e) {
            return false;
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("delete export of " + volume, e);
        }
    }
}
