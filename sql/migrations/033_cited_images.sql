-- Where a report_images row comes from: `figure` (the parser's figure: an image in the report),
-- `pseudo` (ASCII art or Mermaid in a code block), `cited` (a reference whose URL is an image, cited by
-- a paragraph: MMDR's MOSAIC judges it as a visual item; TVIR's figure metrics leave it out).
ALTER TABLE report_images ADD COLUMN IF NOT EXISTS origin VARCHAR;
