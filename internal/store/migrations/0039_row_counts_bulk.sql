-- A transaction that sets lectern.row_counts to 'off' (SET LOCAL) skips
-- the PostgreSQL counter triggers and writes its counters itself. A
-- domain import needs it: every insert of a row counted by the triggers
-- updates the same counter row, and PostgreSQL walks all the versions
-- of that row the transaction made before it at each update, so an
-- import of n users took time in n² (20,000 users: 3.4 s in the
-- triggers; 100,000: minutes). SQLite updates the row in place and keeps
-- its triggers.
-- @postgres
CREATE OR REPLACE FUNCTION row_counts_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF current_setting('lectern.row_counts', true) = 'off' THEN
		RETURN NULL;
	END IF;
	IF TG_OP = 'INSERT' THEN
		PERFORM row_counts_add(NEW.domain_id, TG_TABLE_NAME, 1);
		RETURN NEW;
	END IF;
	PERFORM row_counts_add(OLD.domain_id, TG_TABLE_NAME, -1);
	RETURN OLD;
END
$$;
CREATE OR REPLACE FUNCTION live_classes_count_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF current_setting('lectern.row_counts', true) = 'off' THEN
		RETURN NULL;
	END IF;
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
