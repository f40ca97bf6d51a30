"""What every release loader shares: the import log and its records (records.py), streaming JSON
readers (json_readers.py), report and image readers (reports.py, report_text.py), attachment texts
(attachments.py), and our generic layout (generic_layout.py, generic.py). No benchmark lives here."""
