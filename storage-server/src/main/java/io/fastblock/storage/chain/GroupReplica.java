package io.fastblock.storage.chain;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.TrimPlan;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's replica of one group: its view of the chain, the writes it admits, its sent list,
 * and what it does when the chain changes (van Renesse and Schneider's rules, with durability
 * following the position):
 *
 * <ul>
 * <li>Writes of a group are admitted one at a time in arrival order ({@link SerialSteps}); the
 *     ordering point (sequence, local apply, sent list, forward) runs under this object's lock.</li>
 * <li>A new chain version is applied at once ({@link #offerView}); writes of the new version wait
 *     for its transition: a node that becomes tail first waits for its in-place writes and fsyncs
 *     them, a node that stops being tail first folds its log. Then every unacknowledged write of
 *     the sent list is resent, in order, with the new version, to the new successor; or, if there
 *     is none, counts as acknowledged.</li>
 * <li>A failed forward without a chain change makes the node re-read the group; if it did not
 *     change, the whole unacknowledged list is resent in order on a new connection. The receiver
 *     applies a (chunk, sequence) at most once ({@link AppliedWindow}).</li>
 * </ul>
 */
final class GroupReplica {
    private static final Logger LOG = LoggerFactory.getLogger(GroupReplica.class);

    /** Tracked local writes at which {@link #track} sweeps out every settled one, not only those in front. */
    private static final int SWEEP_AT_LEAST = 1024;

    /** Marks, in place of a local error, that this tail has answered the client directly. */
    private static final StorageResponse ANSWERED = StorageResponse.ok(0, OpCode.WRITE).withAnswered();

    final int groupId;
    private final ReplicaContext ctx;
    private final SerialSteps admission = new SerialSteps();
    private final SentList sent;
    private final AppliedWindow applied;
    /**
     * Local writes not yet seen settled, oldest first (guarded by this). Settled ones leave lazily,
     * when the next is tracked: no callback and no concurrent set per write.
     */
    private final ArrayDeque<CompletableFuture<Void>> localInFlight = new ArrayDeque<>();
    private int sweepAt = SWEEP_AT_LEAST;

    // Guarded by this.
    private GroupRecord view;
    private ChainPosition position = new ChainPosition(ChainPosition.Role.NONE, false, null);
    private CompletableFuture<Void> transition = CompletableFuture.completedFuture(null);
    private boolean linkBroken;
    private boolean recoveryScheduled;
    private WrittenRanges fresh;
    private CatchUp catchUp;

    GroupReplica(int groupId, ReplicaContext ctx) {
        this.groupId = groupId;
        this.ctx = ctx;
        this.sent = new SentList(ctx.limits().sentMaxWrites(), ctx.limits().sentMaxBytes(), ctx.scheduler());
        this.applied = new AppliedWindow(ctx.limits().appliedWindow());
    }

    /** This node's position in the newest view it knows (NONE before any). */
    synchronized ChainPosition position() {
        return position;
    }

    synchronized GroupRecord view() {
        return view;
    }

    // ---------------------------------------------------------------- views

    /**
     * Completes when this replica knows a view at least as new as {@code version} (re-reading
     * ZooKeeper when the request is newer than what it knows) and that view's transition is done.
     */
    CompletableFuture<Void> ensureView(long version) {
        synchronized (this) {
            if (view != null && version <= view.chainVersion()) {
                return transition;
            }
        }
        return ctx.groups().refresh(groupId).thenCompose(record -> {
            if (record != null) {
                offerView(record);
            }
            synchronized (this) {
                return transition;
            }
        });
    }

    /**
     * Applies a newer view of the group; older versions are ignored, and so is the same version
     * unless its joining node changed (the namenode names a joining node without a version bump,
     * since the members did not change: a server that already holds that version must still learn
     * it is joining, or a node restarted after its group shrank would never catch up).
     */
    synchronized void offerView(GroupRecord record) {
        if (record == null || record.id() != groupId || (view != null && (record.chainVersion() < view.chainVersion()
                || (record.chainVersion() == view.chainVersion()
                        && java.util.Objects.equals(record.joining(), view.joining()))))) {
            return;
        }
        GroupRecord oldView = view;
        ChainPosition old = position;
        view = record;
        position = ChainPosition.of(record, ctx.nodeId());
        if (oldView != null) {
            ctx.metrics().reconfigurations.increment();
            LOG.info("node {} group {}: chain version {} -> {}, {} -> {} (members {}, joining {})", ctx.nodeId(), groupId,
                    oldView.chainVersion(), record.chainVersion(), old.role(), position.role(), record.members(), record.joining());
        }
        boolean promote = oldView != null && position.tail() && !old.tail();
        // A node that is not tail must not keep log extents of the group's chunks: they would
        // shadow the in-place writes it takes from now on once it is tail again. That covers
        // stopping being tail, and a restarted node (first view, or back from NONE to joining).
        boolean fold = !position.tail() && (oldView == null || old.tail() || (!old.member() && !old.joining()));
        List<CompletableFuture<Void>> locals = localsInFlight();
        List<ChunkId> chunks = ctx.chunks().of(groupId);
        // The log horizon (which changes a returning member can be told from the log): recorded on
        // taking the tail position before any write is appended in it, dropped when leaving it.
        if (position.tail()) {
            long seed = chunks.isEmpty() && ctx.clock().current() == 0 ? 0
                    : Math.max(ctx.clock().current(), System.currentTimeMillis() * 1000);
            ctx.storage().enterTail(groupId, seed);
        } else if (fold) {
            ctx.storage().forgetTail(groupId);
        }
        CompletableFuture<Void> barrier = transition.handle((ignored, err) -> null).thenCompose(ignored -> {
            if (!promote && !fold) {
                return CompletableFuture.completedFuture(null);
            }
            CompletableFuture<Void> settled = CompletableFuture.allOf(locals.toArray(CompletableFuture[]::new)).handle((v, e) -> null);
            if (promote) {
                // Durability follows the position: nothing is acknowledged as tail before the
                // in-place copy (everything applied so far) is on disk.
                return settled.thenCompose(v -> ctx.storage().makeDurable(chunks)).thenRun(ctx.metrics().promotions::increment);
            }
            return settled.thenCompose(v -> ctx.storage().leaveTail(chunks));
        });
        if (position.joining()) {
            // Every attempt records forwarded ranges anew from here: ranges excluded from its copy
            // must be exactly those written after the record it goes by (its stamp). Forwarded
            // writes that came before are in the tail's copy too (a tail forwards what it applied).
            fresh = new WrittenRanges();
            CatchUp run = new CatchUp(this, ctx, record, ctx.groups().stamp(groupId));
            if (catchUp != null) {
                catchUp.cancel();
            }
            catchUp = run;
            barrier.thenRun(run::start);
        } else {
            fresh = null;
            if (catchUp != null) {
                catchUp.cancel();
                catchUp = null;
            }
        }
        transition = barrier.handle((ignored, err) -> {
            afterTransition(record, err);
            return null;
        });
    }

    /** Once the transition to {@code record} is done: resend or settle the sent list. */
    private synchronized void afterTransition(GroupRecord record, Throwable err) {
        if (view != record) {
            return; // a newer view's transition will do it
        }
        List<SentWrite> pending = new ArrayList<>(sent.inOrder());
        if (err != null) {
            LOG.error("node {} group {}: transition to chain version {} failed: {}", ctx.nodeId(), groupId,
                    record.chainVersion(), err.toString());
            for (SentWrite w : pending) {
                finish(w, error(Status.IO_ERROR, "node " + ctx.nodeId() + ": could not take position " + position.role()
                        + " in group " + groupId + ": " + err));
            }
            return;
        }
        if (!position.member() && !position.joining()) {
            for (SentWrite w : pending) {
                finish(w, error(Status.STALE_CHAIN, "node " + ctx.nodeId() + " left group " + groupId + " at chain version "
                        + record.chainVersion()));
            }
            return;
        }
        String successor = position.successor();
        if (successor == null) {
            // Chain replication's tail rule: what this node sent on now counts as complete (it is
            // the end of the chain and its copy is durable).
            for (SentWrite w : pending) {
                finish(w, StorageResponse.ok(0, OpCode.WRITE));
            }
            return;
        }
        for (SentWrite w : pending) {
            w.attempt++;
        }
        linkBroken = false;
        if (!pending.isEmpty()) {
            ctx.metrics().resends.increment(pending.size());
            LOG.info("node {} group {}: resending {} unacknowledged writes to {} at chain version {}", ctx.nodeId(), groupId,
                    pending.size(), successor, record.chainVersion());
        }
        dispatch();
    }

    // ---------------------------------------------------------------- writes

    /**
     * Admits a write in arrival order; the future completes with the answer for the sender.
     * {@code role[0]} is set to the role the write was applied in (for metrics).
     */
    CompletableFuture<StorageResponse> write(WriteRequest w, String[] role) {
        ctx.metrics().writesReceived.increment();
        return composeNow(admission.submit(() -> admit(w, role)), answer -> answer);
    }

    /**
     * {@code f.thenCompose(next)}, except that {@code next} runs at once when {@code f} has already
     * completed normally. Every write passes the admission's stages on every replica and almost none
     * waits in them; each stage skipped saves an object and a completion.
     */
    private static <T, U> CompletableFuture<U> composeNow(CompletableFuture<T> f,
                                                          Function<? super T, ? extends CompletableFuture<U>> next) {
        if (!f.isDone() || f.isCompletedExceptionally()) {
            return f.thenCompose(next);
        }
        try {
            return next.apply(f.join());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<CompletableFuture<StorageResponse>> admit(WriteRequest w, String[] role) {
        long version = w.chain().chainVersion();
        return composeNow(ensureView(version), ignored -> admitInView(w, version, role));
    }

    /** Admits a write once this replica's view is at least the write's version. */
    private CompletableFuture<CompletableFuture<StorageResponse>> admitInView(WriteRequest w, long version, String[] role) {
        ChainPosition pos;
        synchronized (this) {
            checkVersion(version);
            pos = position;
        }
        checkWriter(pos, w);
        // A FENCE for the volume waits for this ticket: released once the write's answer is known.
        // The epoch is checked where writes enter the chain (the head); a forwarded copy of a
        // write the head admitted is applied whatever the floor here, or the replicas would
        // diverge (the head's FENCE answer waits for it to complete down the chain).
        EpochFence.Ticket ticket = w.forwarded()
                ? ctx.fence().admitForwarded(w.chunk().volumeId(), w.chain().leaseEpoch())
                : ctx.fence().admitWrite(w.chunk().volumeId(), w.chain().leaseEpoch(), ctx.nodeId(), w.isTrim());
        CompletableFuture<CompletableFuture<StorageResponse>> staged;
        try {
            String successor = pos.successor();
            if (successor == null) {
                staged = CompletableFuture.completedFuture(order(w, version, false, role));
            } else {
                staged = forwardable(w, version, successor, role);
            }
        } catch (RuntimeException e) {
            ticket.release();
            throw e;
        }
        composeNow(staged, answer -> answer).whenComplete((r, e) -> ticket.release());
        return staged;
    }

    /** Orders a write that goes on to {@code successor} once the link is up and the sent list has room for it. */
    private CompletableFuture<CompletableFuture<StorageResponse>> forwardable(WriteRequest w, long version, String successor,
                                                                              String[] role) {
        return composeNow(ctx.downstream().prepare(successor), linked -> composeNow(reserve(sentBytes(w)),
                room -> CompletableFuture.completedFuture(order(w, version, true, role))));
    }

    /** What a write holds in the sent list: its data (a trim carries none). */
    private static int sentBytes(WriteRequest w) {
        return w.isTrim() ? 0 : w.length();
    }

    private synchronized CompletableFuture<Void> reserve(int bytes) {
        if (sent.wouldWait(bytes)) {
            ctx.metrics().sentListFull.increment();
        }
        return sent.reserve(bytes);
    }

    private void checkVersion(long version) {
        if (view == null) {
            throw new RequestRejected(Status.UNKNOWN_GROUP, "node " + ctx.nodeId() + ": group " + groupId + " is unknown");
        }
        if (view.chainVersion() != version) {
            throw new RequestRejected(Status.STALE_CHAIN, "node " + ctx.nodeId() + ": group " + groupId + " is at chain version "
                    + view.chainVersion() + ", request has " + version);
        }
    }

    private void checkWriter(ChainPosition pos, WriteRequest w) {
        if (!pos.member() && !pos.joining()) {
            throw new RequestRejected(Status.NOT_MEMBER, "node " + ctx.nodeId() + " is not a member of group " + groupId
                    + " " + view().members());
        }
        if (pos.head() && w.forwarded()) {
            throw new RequestRejected(Status.BAD_REQUEST, "node " + ctx.nodeId() + " is the head of group " + groupId
                    + " but received a forwarded write");
        }
        if (!pos.head() && !w.forwarded()) {
            throw new RequestRejected(Status.BAD_REQUEST, "node " + ctx.nodeId() + " is not the head of group " + groupId
                    + "; writes enter the chain at " + view().head());
        }
    }

    /**
     * The ordering point. Takes ownership of the write's data unless it throws (then nothing was
     * touched and a reservation made for it is returned).
     */
    private synchronized CompletableFuture<StorageResponse> order(WriteRequest w, long version, boolean reserved, String[] role) {
        String successor = position.successor();
        if (view.chainVersion() != version || (successor != null) != reserved) {
            if (reserved) {
                sent.unreserve(sentBytes(w));
            }
            checkVersion(version);
            throw new RequestRejected(Status.STALE_CHAIN, "node " + ctx.nodeId() + ": group " + groupId
                    + " changed while the write waited");
        }
        ChainPosition pos = position;
        role[0] = pos.role().metricName();
        long sequence = pos.head() ? ctx.clock().next() : w.sequence();
        if (!pos.head()) {
            ctx.clock().observe(sequence);
        }
        ByteBuf data = w.data();
        // The head has just drawn the sequence, so only a forwarded write can be a resent duplicate.
        CompletableFuture<Void> local = pos.head() ? null : applied.get(w.chunk(), sequence);
        CompletableFuture<Void> inPlace = null; // a member's own in-place write of this request, head or middle
        if (local != null) {
            ctx.metrics().duplicatesSkipped.increment();
        } else {
            if (pos.joining()) {
                // A trim is as new as a write: data copied from the tail must not land on it either.
                fresh.add(w.chunk(), w.offset(), w.length());
            }
            if (w.isTrim()) {
                local = trimLocally(w, sequence, pos);
            } else {
                CompletableFuture<Void> stored = pos.durable()
                        ? ctx.storage().durable(groupId, w.chunk(), w.offset(), sequence, data.retainedDuplicate())
                        // A joining node tracks its forwarded writes as sequence 0: its chunks' recorded
                        // sequences must not pass what it has copied (a delta after a cut-short catch-up).
                        : ctx.storage().inPlace(groupId, pos.joining() ? 0 : sequence, w.chunk(), w.offset(),
                        data.retainedDuplicate());
                if (!pos.durable() && pos.member() && !pos.joining()) {
                    inPlace = stored;
                }
                CompletableFuture<Void> registered = ctx.chunks().add(groupId, w.chunk());
                CompletableFuture<Void> bounded = ctx.chunks().extend(groupId, w.chunk(), w.offset() + w.length());
                local = registered.isDone() && !registered.isCompletedExceptionally() && bounded.isDone()
                        && !bounded.isCompletedExceptionally() ? stored : CompletableFuture.allOf(stored, registered, bounded);
            }
            track(local);
            applied.put(w.chunk(), sequence, local);
        }
        CompletableFuture<StorageResponse> downstream;
        if (successor != null) {
            // A tail forwarding to its joining node answers the client itself (below): the joiner is no tail.
            boolean joinerNext = pos.tail();
            SentWrite entry = new SentWrite(sent.nextOrder(), w.chunk(), w.offset(), sequence, w.chain().leaseEpoch(),
                    data.retainedDuplicate(), w.isTrim() ? w.length() : -1, local, pos.tail(),
                    joinerNext ? 0 : w.answerTo(), joinerNext ? 0 : w.answerId());
            if (!pos.tail()) {
                // Applied here ahead of the tail: until the tail has it, this chunk's recorded
                // sequence must not cover it (a returning member would keep a write the tail lacks).
                entry.aheadOfTail = true;
                ctx.storage().unconfirmedWrite(w.chunk());
            }
            sent.add(entry);
            ctx.metrics().sentEntries.incrementAndGet();
            ctx.metrics().sentBytes.addAndGet(entry.bytes);
            if (entry.durableFirst) {
                local.whenComplete((v, e) -> {
                    synchronized (this) {
                        dispatch();
                    }
                });
            }
            dispatch();
            downstream = entry.acked;
        } else {
            downstream = CompletableFuture.completedFuture(StorageResponse.ok(0, OpCode.WRITE));
        }
        data.release();
        if (inPlace != null) {
            // This copy now lacks a write the rest of the chain may have (and the tail may have
            // answered the client for): its reads must not be served from here until repaired.
            ChunkId chunk = w.chunk();
            CompletableFuture<StorageResponse> settled = downstream;
            inPlace.whenComplete((v, err) -> {
                if (err != null) {
                    ctx.storage().inPlaceFailed(groupId, chunk, settled);
                }
            });
        }
        long requestId = w.requestId();
        CompletableFuture<StorageResponse> localResult = local.handle((v, err) -> err == null ? null
                : StorageResponse.error(requestId, OpCode.WRITE, Status.IO_ERROR,
                "node " + ctx.nodeId() + ": local write failed: " + ReplicaService.unwrap(err)));
        // The tail (also one forwarding to a joining node) answers a client that asked for it as soon
        // as its own copy is durable; the OK going back up the chain says so, and the head then
        // sends none of its own. Head and middle still wait for their in-place write before
        // answering up the chain, but a read that reaches them after the client's answer is ordered
        // behind that write on its stripe (ChunkStore), so it sees it.
        boolean answerHere = pos.tail() && w.answerDirect();
        long answerTo = w.answerTo();
        long answerId = w.answerId();
        CompletableFuture<StorageResponse> localAnswer = !answerHere ? localResult : localResult.thenApply(localError -> {
            if (localError != null) {
                return localError;
            }
            return ctx.answers().answer(answerTo, answerId) ? ANSWERED : null;
        });
        return localAnswer.thenCombine(downstream, (localError, down) -> {
            if (localError != null && localError != ANSWERED) {
                return localError;
            }
            if (!down.isOk()) {
                // The failing node named itself in its message; pass status and text up unchanged.
                return StorageResponse.error(requestId, OpCode.WRITE, down.status(), down.message());
            }
            StorageResponse ok = StorageResponse.ok(requestId, OpCode.WRITE);
            return localError == ANSWERED || down.answered() ? ok.withAnswered() : ok;
        });
    }

    /**
     * Applies a trim to this replica's copy for its position. A trim of the whole chunk (from 0 to
     * at least everything written) also drops the chunk from the group's list, here at the
     * ordering point: a write ordered after it adds the chunk back after the removal.
     */
    private CompletableFuture<Void> trimLocally(WriteRequest w, long sequence, ChainPosition pos) {
        ChunkId chunk = w.chunk();
        boolean whole = w.offset() == 0 && (w.length() >= ReplicaService.MAX_CHUNK_BYTES
                || w.length() >= Math.max(ctx.chunks().bound(chunk), ctx.storage().length(chunk)));
        CompletableFuture<Void> trimmed = ctx.storage().trim(groupId, chunk, w.offset(), w.length(),
                pos.joining() ? 0 : sequence, pos.durable(), whole);
        return whole ? CompletableFuture.allOf(trimmed, ctx.chunks().remove(groupId, chunk)) : trimmed;
    }

    /** Holds the lock. */
    private void track(CompletableFuture<Void> local) {
        // Local writes settle about in arrival order, so the front is where settled ones are. One
        // that stays unsettled (a slow stripe) holds the rest behind it: then a whole sweep, at
        // sizes that double, keeps the work per write constant.
        while (!localInFlight.isEmpty() && localInFlight.peekFirst().isDone()) {
            localInFlight.pollFirst();
        }
        if (localInFlight.size() >= sweepAt) {
            localInFlight.removeIf(CompletableFuture::isDone);
            sweepAt = Math.max(SWEEP_AT_LEAST, 2 * localInFlight.size());
        }
        localInFlight.addLast(local);
    }

    /** The local writes still in flight. Holds the lock. */
    private List<CompletableFuture<Void>> localsInFlight() {
        localInFlight.removeIf(CompletableFuture::isDone);
        return List.copyOf(localInFlight);
    }

    /** Sends, in order, every sent-list entry not yet sent in its current attempt. Holds the lock. */
    private void dispatch() {
        String successor = position.successor();
        if (successor == null || linkBroken || view == null) {
            return;
        }
        List<SentWrite> next = new ArrayList<>();
        for (SentWrite w : sent.inOrder()) {
            if (w.dispatchedAttempt == w.attempt) {
                continue;
            }
            if (w.durableFirst && !w.local.isDone()) {
                break; // keep the successor's order: nothing overtakes a write still being made durable
            }
            next.add(w);
        }
        long version = view.chainVersion();
        for (SentWrite w : next) {
            if (linkBroken || w.done) {
                return;
            }
            int attempt = w.attempt;
            w.dispatchedAttempt = attempt;
            w.successor = successor;
            if (w.durableFirst && w.local.isCompletedExceptionally()) {
                // Not durable here, so the sender gets this node's error; the joiner need not see it.
                finish(w, StorageResponse.ok(0, OpCode.WRITE));
                continue;
            }
            ChainAddress address = new ChainAddress(groupId, version, w.leaseEpoch);
            int direct = w.answerTo != 0 ? WriteRequest.FLAG_ANSWER_DIRECT : 0;
            WriteRequest forward = w.trimLength >= 0
                    ? new WriteRequest(0, WriteRequest.FLAG_FORWARDED | WriteRequest.FLAG_TRIM | direct, address, w.chunk,
                    w.offset, w.sequence, io.netty.buffer.Unpooled.EMPTY_BUFFER, w.trimLength, w.answerTo, w.answerId)
                    : new WriteRequest(0, WriteRequest.FLAG_FORWARDED | direct, address, w.chunk, w.offset, w.sequence,
                    w.data.retainedDuplicate(), 0, w.answerTo, w.answerId);
            ctx.downstream().forward(successor, forward).whenComplete((resp, err) -> answered(w, attempt, resp, err));
        }
    }

    private void answered(SentWrite w, int attempt, StorageResponse resp, Throwable err) {
        StorageResponse r = resp != null ? resp : error(Status.IO_ERROR, "node " + ctx.nodeId() + ": forward failed: " + err);
        try {
            synchronized (this) {
                if (w.done) {
                    return;
                }
                if (r.isOk()) {
                    // Also for an older attempt: the successor (and everything after it) has the write.
                    StorageResponse ok = StorageResponse.ok(0, OpCode.WRITE);
                    finish(w, r.answered() ? ok.withAnswered() : ok);
                } else if (attempt == w.attempt) {
                    w.lastError = StorageResponse.error(0, OpCode.WRITE, r.status(), r.message());
                    linkBroken = true;
                    scheduleRecovery();
                }
            }
        } finally {
            r.data().release();
        }
    }

    private void finish(SentWrite w, StorageResponse answer) {
        if (w.done) {
            return;
        }
        w.done = true;
        if (w.aheadOfTail) {
            ctx.storage().confirmed(w.chunk, answer.isOk());
        }
        sent.remove(w);
        ctx.metrics().sentEntries.decrementAndGet();
        ctx.metrics().sentBytes.addAndGet(-w.bytes);
        w.data.release();
        w.acked.complete(answer);
    }

    /**
     * A forward failed: re-read the group (the failure may be a chain change this node has not
     * seen). If the chain did not change, resend the whole unacknowledged list in order on a new
     * connection after a pause; a changed chain resends through {@link #afterTransition}.
     */
    private void scheduleRecovery() {
        if (recoveryScheduled) {
            return;
        }
        recoveryScheduled = true;
        long seen = view.chainVersion();
        ctx.groups().refresh(groupId).whenComplete((record, err) -> {
            if (record != null) {
                offerView(record);
            }
            ctx.scheduler().schedule(() -> resetLink(seen), ctx.limits().linkRetryMillis(), TimeUnit.MILLISECONDS);
        });
    }

    private synchronized void resetLink(long seenVersion) {
        recoveryScheduled = false;
        if (!linkBroken || view.chainVersion() != seenVersion) {
            return;
        }
        List<SentWrite> pending = new ArrayList<>(sent.inOrder());
        for (SentWrite w : pending) {
            w.attempt++;
        }
        linkBroken = false;
        ctx.metrics().resends.increment(pending.size());
        dispatch();
    }

    /** Fails writes whose successor has not acknowledged them within the limit. */
    synchronized void expire(long nowNanos) {
        long limit = TimeUnit.MILLISECONDS.toNanos(ctx.limits().ackTimeoutMillis());
        for (SentWrite w : new ArrayList<>(sent.inOrder())) {
            if (nowNanos - w.createdNanos > limit) {
                ctx.metrics().ackTimeouts.increment();
                String why = w.lastError != null ? ": " + w.lastError.message() : "";
                String who = w.successor != null ? w.successor : String.valueOf(position.successor());
                finish(w, error(w.lastError != null ? w.lastError.status() : Status.IO_ERROR, "node " + ctx.nodeId()
                        + ": successor " + who + " did not acknowledge within " + ctx.limits().ackTimeoutMillis()
                        + " ms" + why));
            }
        }
    }

    /** The position a read of {@code version} is served in; throws if this node must not serve it. */
    synchronized ChainPosition admitRead(long version) {
        checkVersion(version);
        if (position.joining()) {
            throw new RequestRejected(Status.NOT_MEMBER, "node " + ctx.nodeId() + " is joining group " + groupId
                    + " and serves no reads until it is a member");
        }
        if (!position.member()) {
            throw new RequestRejected(Status.NOT_MEMBER, "node " + ctx.nodeId() + " is not a member of group " + groupId
                    + " " + view.members());
        }
        return position;
    }

    /** Checks that this node is the tail of {@code version}, which alone serves CHUNK_LIST and COPY_READ. */
    synchronized void admitCopySource(long version) {
        checkVersion(version);
        if (!position.tail()) {
            throw new RequestRejected(Status.NOT_MEMBER, "node " + ctx.nodeId() + " is not the tail of group " + groupId
                    + " " + view.members() + "; catch up from " + view.tail());
        }
    }

    /**
     * Before a tail lists its chunks for a copy (the first step of every catch-up or resync
     * attempt): re-reads the group from ZooKeeper, then completes once every local write ordered
     * so far is readable. A joining node learns it is joining from the same record, often before
     * the tail does (the version does not change), and a write the tail orders before it knows
     * of the joiner is not forwarded to it: without this, the joiner could copy a range before
     * such a write became readable here (or before it arrived) and never receive it. Once this
     * completes, every write this tail orders from now on goes to the joining successor, and
     * every earlier one is in what the copy reads.
     *
     * <p>A joining node names itself ({@code joiner}, null for a resync): if this tail's view,
     * even re-read, does not name it as joining (the record changed again, or the re-read came
     * from a ZooKeeper server behind the one the joiner reads), the listing is refused with
     * {@code STALE_CHAIN} and the joiner retries. Answering would let writes this tail orders
     * without forwarding them to the joiner land in ranges the joiner has already copied.
     */
    CompletableFuture<Void> settleCopySource(long version, String joiner) {
        return ctx.groups().refresh(groupId).thenCompose(record -> {
            List<CompletableFuture<Void>> pending;
            synchronized (this) {
                if (record != null) {
                    offerView(record);
                }
                admitCopySource(version);
                if (joiner != null && !joiner.equals(view.joining())) {
                    throw new RequestRejected(Status.STALE_CHAIN, "node " + ctx.nodeId() + ": tail of group " + groupId
                            + " at chain version " + version + " does not know " + joiner + " as joining (joining: "
                            + view.joining() + "); not listing chunks for a copy it would not forward writes to");
                }
                pending = localsInFlight();
            }
            return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).handle((v, e) -> null);
        });
    }

    synchronized int sentSize() {
        return sent.size();
    }

    synchronized int admissionsWaiting() {
        return sent.waiting();
    }

    // ---------------------------------------------------------------- catch-up (joining side)

    /**
     * Writes a piece copied from the tail, except where a forwarded write landed since this node
     * started joining (that data is newer). Checked and submitted under the lock, in the same
     * order as forwarded writes, so a forwarded write either excludes the range or is applied
     * after the copy. Takes ownership of {@code data}.
     */
    CompletableFuture<Long> applyCopy(CatchUp run, ChunkId chunk, long offset, ByteBuf data, long localLength,
                                      io.fastblock.protocol.Extents allocated) {
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        long copied = 0;
        synchronized (this) {
            if (catchUp != run || fresh == null) {
                data.release();
                return CompletableFuture.failedFuture(new CatchUp.Cancelled());
            }
            for (long[] gap : fresh.uncovered(chunk, offset, data.readableBytes())) {
                for (long[] part : byAllocation(gap[0], gap[0] + gap[1], allocated)) {
                    long a = part[0];
                    long b = part[1];
                    if (part[2] == 0) {
                        // Not allocated at the tail: give its whole blocks back here too (below the local
                        // length; past it they read as zeros already). A partial block borders a forwarded
                        // write, which allocated it, so it takes the copied bytes.
                        for (TrimPlan.Piece p : TrimPlan.of(a, b - a)) {
                            if (!p.trim()) {
                                copyPart(chunk, offset, data, p.offsetInChunk(), p.offsetInChunk() + p.length(), writes);
                            } else if (p.offsetInChunk() < localLength) {
                                CompletableFuture<Void> f =
                                        ctx.storage().trim(groupId, chunk, p.offsetInChunk(), p.length(), 0, false, false);
                                track(f);
                                writes.add(f);
                            }
                        }
                        copied += b - a; // brought in line too (progress counts every byte of the piece)
                        continue;
                    }
                    copyPart(chunk, offset, data, a, b, writes);
                    copied += b - a;
                }
            }
            writes.add(ctx.chunks().add(groupId, chunk));
            writes.add(ctx.chunks().extend(groupId, chunk, offset + data.readableBytes()));
        }
        data.release();
        long bytes = copied;
        return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).thenApply(v -> bytes);
    }

    /**
     * Gives back a range the tail trimmed since this node last had the chunk (a delta catch-up),
     * except where a forwarded write or trim landed since joining; ordered like {@link #applyCopy}.
     * Block-aligned gaps are trimmed (unallocated, as at the tail); a gap a later write split off
     * a block is written as zeros.
     */
    CompletableFuture<Long> applyTrim(CatchUp run, ChunkId chunk, long offset, int length) {
        List<CompletableFuture<Void>> ops = new ArrayList<>();
        synchronized (this) {
            if (catchUp != run || fresh == null) {
                return CompletableFuture.failedFuture(new CatchUp.Cancelled());
            }
            for (long[] gap : fresh.uncovered(chunk, offset, length)) {
                // Whole blocks are trimmed; only the partial blocks at the gap's ends are written as zeros
                // (a gap a forwarded write split off a block, or a chunk whose length is not whole blocks).
                for (TrimPlan.Piece p : TrimPlan.of(gap[0], gap[1])) {
                    CompletableFuture<Void> f = p.trim()
                            ? ctx.storage().trim(groupId, chunk, p.offsetInChunk(), p.length(), 0, false, false)
                            : ctx.storage().inPlace(groupId, 0, chunk, p.offsetInChunk(),
                                    io.netty.buffer.Unpooled.wrappedBuffer(new byte[p.length()]));
                    track(f);
                    ops.add(f);
                }
            }
        }
        return CompletableFuture.allOf(ops.toArray(CompletableFuture[]::new)).thenApply(v -> 0L);
    }

    /** Writes the copied bytes {@code [a, b)} of a piece starting at {@code offset} in place. Holds the lock. */
    private void copyPart(ChunkId chunk, long offset, ByteBuf data, long a, long b, List<CompletableFuture<Void>> writes) {
        if (b <= a) {
            return;
        }
        ByteBuf piece = data.retainedSlice(data.readerIndex() + (int) (a - offset), (int) (b - a));
        CompletableFuture<Void> f = ctx.storage().inPlace(groupId, 0, chunk, a, piece);
        track(f);
        writes.add(f);
    }

    /** {@code [a, b)} cut into {start, end, allocated 1/0} parts by the tail's extents. */
    private static List<long[]> byAllocation(long a, long b, io.fastblock.protocol.Extents allocated) {
        List<long[]> parts = new ArrayList<>();
        long at = a;
        for (io.fastblock.protocol.Extents.Range r : allocated.ranges()) {
            long s = Math.max(at, r.offset());
            long e = Math.min(b, r.end());
            if (e <= s) {
                continue;
            }
            if (s > at) {
                parts.add(new long[]{at, s, 0});
            }
            parts.add(new long[]{s, e, 1});
            at = e;
        }
        if (at < b) {
            parts.add(new long[]{at, b, 0});
        }
        return parts;
    }

    /**
     * Starts the joining over after {@code run} found the group record written again since it
     * began (see {@link CatchUp}): re-reads the record, and unless that makes a newer view (with
     * its own attempt), begins a new attempt that records forwarded ranges anew.
     */
    void restartJoin(CatchUp run) {
        ctx.groups().refresh(groupId).whenComplete((record, err) -> {
            CatchUp next;
            synchronized (this) {
                if (record != null) {
                    offerView(record);
                }
                if (catchUp != run || !position.joining()) {
                    return;
                }
                fresh = new WrittenRanges();
                next = new CatchUp(this, ctx, view, ctx.groups().stamp(groupId));
                catchUp = next;
            }
            ctx.scheduler().schedule(next::start, ctx.limits().linkRetryMillis(), TimeUnit.MILLISECONDS);
        });
    }

    synchronized boolean isCurrent(CatchUp run) {
        return catchUp == run;
    }

    private static StorageResponse error(Status status, String message) {
        return StorageResponse.error(0, OpCode.WRITE, status, message);
    }
}
