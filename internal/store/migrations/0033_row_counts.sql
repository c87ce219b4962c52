-- Exact row counts per domain, kept by triggers in the writing transaction,
-- so a listing's total is one primary-key read instead of a COUNT(*) over
-- the domain (docs/performance.md). Kinds: users, courses, live_classes,
-- live_classes_published (classes with published = 1). A missing row is 0.
-- No foreign key on domain_id: a domain's rows are deleted by cascade, and
-- the delete triggers below may add to a counter of a domain being
-- deleted; domains_row_counts_del removes the domain's counters (a shard
-- row added after it is left, harmless: domain ids are not reused).
--
-- A count is the sum of its rows' n over shard (at most 32 rows). SQLite
-- has one writer and uses shard 0 only. On PostgreSQL each connection adds
-- to its own shard (its backend pid modulo 32): one row updated by every
-- writer would be locked from the update to the commit, and the domain's
-- writes would queue on it (measured: users/create fell from 2.4k to 0.4k
-- requests/s with a single row).
CREATE TABLE row_counts (
	domain_id BIGINT NOT NULL,
	kind TEXT NOT NULL,
	shard INTEGER NOT NULL DEFAULT 0,
	n BIGINT NOT NULL,
	PRIMARY KEY (domain_id, kind, shard)
);

INSERT INTO row_counts (domain_id, kind, n) SELECT domain_id, 'users', COUNT(*) FROM users GROUP BY domain_id;
INSERT INTO row_counts (domain_id, kind, n) SELECT domain_id, 'courses', COUNT(*) FROM courses GROUP BY domain_id;
INSERT INTO row_counts (domain_id, kind, n) SELECT domain_id, 'live_classes', COUNT(*) FROM live_classes GROUP BY domain_id;
INSERT INTO row_counts (domain_id, kind, n) SELECT domain_id, 'live_classes_published', COUNT(*) FROM live_classes WHERE published = 1 GROUP BY domain_id;

-- Pages in id order within a domain, read from the index alone.
CREATE INDEX users_domain_id ON users (domain_id, id);
CREATE INDEX live_classes_domain_published ON live_classes (domain_id, published, id);

-- @sqlite
CREATE TRIGGER users_count_ins AFTER INSERT ON users BEGIN
	INSERT INTO row_counts (domain_id, kind, n) VALUES (NEW.domain_id, 'users', 1)
		ON CONFLICT (domain_id, kind, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER users_count_del AFTER DELETE ON users BEGIN
	UPDATE row_counts SET n = n - 1 WHERE domain_id = OLD.domain_id AND kind = 'users';
END;
CREATE TRIGGER courses_count_ins AFTER INSERT ON courses BEGIN
	INSERT INTO row_counts (domain_id, kind, n) VALUES (NEW.domain_id, 'courses', 1)
		ON CONFLICT (domain_id, kind, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER courses_count_del AFTER DELETE ON courses BEGIN
	UPDATE row_counts SET n = n - 1 WHERE domain_id = OLD.domain_id AND kind = 'courses';
END;
CREATE TRIGGER live_classes_count_ins AFTER INSERT ON live_classes BEGIN
	INSERT INTO row_counts (domain_id, kind, n) VALUES (NEW.domain_id, 'live_classes', 1)
		ON CONFLICT (domain_id, kind, shard) DO UPDATE SET n = n + 1;
	INSERT INTO row_counts (domain_id, kind, n) SELECT NEW.domain_id, 'live_classes_published', 1 WHERE NEW.published = 1
		ON CONFLICT (domain_id, kind, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER live_classes_count_del AFTER DELETE ON live_classes BEGIN
	UPDATE row_counts SET n = n - 1 WHERE domain_id = OLD.domain_id AND kind = 'live_classes';
	UPDATE row_counts SET n = n - 1 WHERE domain_id = OLD.domain_id AND kind = 'live_classes_published' AND OLD.published = 1;
END;
CREATE TRIGGER live_classes_count_pub AFTER UPDATE OF published ON live_classes
WHEN (OLD.published = 1) <> (NEW.published = 1) BEGIN
	INSERT INTO row_counts (domain_id, kind, n)
		VALUES (NEW.domain_id, 'live_classes_published', CASE WHEN NEW.published = 1 THEN 1 ELSE -1 END)
		ON CONFLICT (domain_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER domains_row_counts_del AFTER DELETE ON domains BEGIN
	DELETE FROM row_counts WHERE domain_id = OLD.id;
END;

-- @postgres
CREATE FUNCTION row_counts_add(d BIGINT, k TEXT, delta BIGINT) RETURNS void LANGUAGE sql AS $$
	INSERT INTO row_counts (domain_id, kind, shard, n) VALUES (d, k, pg_backend_pid() % 32, delta)
		ON CONFLICT (domain_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n
$$;
-- users and courses: the kind is the table's name.
CREATE FUNCTION row_counts_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM row_counts_add(NEW.domain_id, TG_TABLE_NAME, 1);
		RETURN NEW;
	END IF;
	PERFORM row_counts_add(OLD.domain_id, TG_TABLE_NAME, -1);
	RETURN OLD;
END
$$;
CREATE FUNCTION live_classes_count_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM row_counts_add(NEW.domain_id, 'live_classes', 1);
		IF NEW.published = 1 THEN
			PERFORM row_counts_add(NEW.domain_id, 'live_classes_published', 1);
		END IF;
		RETURN NEW;
	ELSIF TG_OP = 'DELETE' THEN
		PERFORM row_counts_add(OLD.domain_id, 'live_classes', -1);
		IF OLD.published = 1 THEN
			PERFORM row_counts_add(OLD.domain_id, 'live_classes_published', -1);
		END IF;
		RETURN OLD;
	END IF;
	IF (OLD.published = 1) <> (NEW.published = 1) THEN
		PERFORM row_counts_add(NEW.domain_id, 'live_classes_published', CASE WHEN NEW.published = 1 THEN 1 ELSE -1 END);
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER users_count AFTER INSERT OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION row_counts_trg();
CREATE TRIGGER courses_count AFTER INSERT OR DELETE ON courses FOR EACH ROW EXECUTE FUNCTION row_counts_trg();
CREATE TRIGGER live_classes_count AFTER INSERT OR DELETE OR UPDATE OF published ON live_classes
	FOR EACH ROW EXECUTE FUNCTION live_classes_count_trg();
CREATE FUNCTION domains_row_counts_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM row_counts WHERE domain_id = OLD.id;
	RETURN OLD;
END
$$;
CREATE TRIGGER domains_row_counts_del AFTER DELETE ON domains FOR EACH ROW EXECUTE FUNCTION domains_row_counts_del();
