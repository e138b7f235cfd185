package io.fastblock.namenode.meta;

import org.apache.zookeeper.KeeperException;

/** Turns what Curator throws into this package's exceptions, keeping the expected KeeperExceptions visible. */
final class ZkCalls {
    private ZkCalls() {
    }

    @FunctionalInterface
    interface ZkCall<T> {
        T call() throws Exception;
    }

    /** Runs {@code call}; KeeperExceptions pass through for the caller to handle, anything else becomes unavailable. */
    static <T> T run(String what, ZkCall<T> call) throws KeeperException {
        try {
            return call.call();
        } catch (KeeperException.ConnectionLossException | KeeperException.SessionExpiredException
                 | KeeperException.OperationTimeoutException e) {
            throw new MetadataUnavailableException(what + ": ZooKeeper unavailable (" + e.code() + ")", e);
        } catch (KeeperException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MetadataUnavailableException(what + ": interrupted", e);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new MetadataUnavailableException(what + ": " + e, e);
        }
    }

    static MetadataUnavailableException unexpected(String what, KeeperException e) {
        return new MetadataUnavailableException(what + ": unexpected ZooKeeper error " + e.code()
                + (e.getPath() == null ? "" : " on " + e.getPath()), e);
    }
}
