package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.TenantRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/** Tenants and their weights under {@code /fastblock/tenants/{name}}. */
public final class TenantStore {
    private final CuratorFramework zk;

    public TenantStore(CuratorFramework zk) {
        this.zk = zk;
    }

    /** Creates or replaces the tenant's record. */
    public TenantRecord put(TenantRecord tenant) {
        String path = ZkPaths.tenant(tenant.name());
        byte[] data = MetaJson.write(tenant);
        while (true) {
            try {
                ZkCalls.run("write tenant", () -> zk.setData().forPath(path, data));
                return tenant;
            } catch (KeeperException.NoNodeException e) {
                try {
                    ZkCalls.run("create tenant", () -> zk.create().forPath(path, data));
                    return tenant;
                } catch (KeeperException.NodeExistsException again) {
                    // created meanwhile: set it
                } catch (KeeperException other) {
                    throw ZkCalls.unexpected("create tenant " + tenant.name(), other);
                }
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("write tenant " + tenant.name(), e);
            }
        }
    }

    public Optional<TenantRecord> get(String name) {
        try {
            return Optional.of(MetaJson.read(ZkCalls.run("read tenant",
                    () -> zk.getData().forPath(ZkPaths.tenant(name))), TenantRecord.class));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read tenant " + name, e);
        }
    }

    public List<TenantRecord> list() {
        List<String> names;
        try {
            names = ZkCalls.run("list tenants", () -> zk.getChildren().forPath(ZkPaths.TENANTS));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list tenants", e);
        }
        List<TenantRecord> out = new ArrayList<>();
        for (String n : names) {
            get(n).ifPresent(out::add);
        }
        out.sort(Comparator.comparing(TenantRecord::name));
        return out;
    }
}
