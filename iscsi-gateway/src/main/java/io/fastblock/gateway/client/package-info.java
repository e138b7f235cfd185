/**
 * The FAST client: turns block reads and writes of a volume into storage-protocol requests to the
 * volume's replication chains, with metadata from the namenode.
 *
 * <p>Entry point: {@link io.fastblock.gateway.client.FastClient} (one per gateway), a
 * {@link io.fastblock.gateway.iscsi.TargetCatalog} whose {@code open} yields
 * {@link io.fastblock.gateway.client.FastVolume}s. Underneath:
 * {@link io.fastblock.gateway.client.NamenodeClient} (REST, own threads, URL failover),
 * {@link io.fastblock.gateway.client.StorageClient} (Netty, one connection per storage node,
 * request-id correlation, timeouts), {@link io.fastblock.gateway.client.ChunkMapCache} (chunk
 * index to chain, per volume), {@link io.fastblock.gateway.client.StreamClassifier} and
 * {@link io.fastblock.gateway.client.ReadRouter} (random reads to the head, sequential to the
 * middle), {@link io.fastblock.gateway.client.Failures} (what to retry, which device error).
 *
 * <p>Threads: namenode answers complete on the namenode client's executor, storage answers on a
 * storage event loop; nothing here blocks either.
 */
package io.fastblock.gateway.client;
